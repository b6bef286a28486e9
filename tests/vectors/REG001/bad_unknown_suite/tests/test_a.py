register_rocm_ci(1600, "stage-c-4-gpu-mi305")  # [REG001]
register_rocm_ci(1600, "nightly-8-gpu-mi350")  # [REG001]
