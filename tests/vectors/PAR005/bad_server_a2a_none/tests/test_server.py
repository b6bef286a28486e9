register_rocm_ci(600, "stage-c-4-gpu-mi350")


def test_no_all_to_all():
    # `none` keeps the EP size asked for
    popen_launch_server(MODEL, URL, 600, other_args=[
        "--tp", "4", "--ep", "8",  # [PAR005]
        "--moe-a2a-backend", "none",
    ])
