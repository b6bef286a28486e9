register_rocm_ci(1600, "stage-c-4-gpu-mi350")
