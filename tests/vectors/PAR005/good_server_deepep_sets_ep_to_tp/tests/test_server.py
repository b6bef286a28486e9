register_rocm_ci(600, "stage-c-4-gpu-mi350")


def test_deepep():
    popen_launch_server(MODEL, URL, 600, other_args=[
        "--tp", "4", "--ep", "8", "--moe-a2a-backend", "deepep",
    ])


def test_mori():
    popen_launch_server(MODEL, URL, 600, other_args=["--tp=4", "--ep=8", "--moe-a2a-backend=mori"])
