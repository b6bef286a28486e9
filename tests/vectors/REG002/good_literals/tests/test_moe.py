register_rocm_ci(1600, "stage-c-4-gpu-mi350", labels=["moe", "megatron"], nightly=False, disabled=None)
register_cuda_ci(1500.5, "stage-c-8-gpu-h200", disabled="FIXME: hangs on H200.")
register_amd_ci(300, "stage-b-1-gpu-mi350", False, "FIXME: flaky")
register_cpu_ci(est_time=60, suite="stage-a-cpu")
