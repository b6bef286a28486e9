EST_TIME = 1600

register_rocm_ci(EST_TIME, "stage-c-4-gpu-mi350")  # [REG002]
register_cuda_ci(1500, "stage-c-8-gpu-h200", owner="someone")  # [REG002]
register_cpu_ci(  # [REG002]
    60,
)
register_amd_ci(300, "stage-b-1-gpu-mi350", False, "FIXME: " + "flaky")  # [REG002]
register_amd_ci(300, "stage-b-1-gpu-mi350", labels=["a", 1])  # [REG002]
