from sglang.test.ci.ci_register import register_amd_ci

register_amd_ci(300, "stage-b-test-1-gpu-small-amd", False, "FIXME: flaky")
register_amd_ci(est_time=60, suite="stage-b-test-2-gpu-large-amd")
register_amd_ci(est_time=90, stage="stage-b", runner_config="1-gpu-small-amd")
