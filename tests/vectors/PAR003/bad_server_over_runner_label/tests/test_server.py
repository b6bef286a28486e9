register_amd_ci(600, "kernels-amd")


def test_tp4():
    # the suite's name gives no GPU count; its job's runner label does: 2
    popen_launch_server(MODEL, URL, 600, other_args=[
        "--tp", "4",  # [PAR003]
    ])
