register_rocm_ci(1600, "stage-c-4-gpu-mi350")
register_rocm_ci(1600, "stage-d-8-gpu-mi350")
register_rocm_ci(1600, "nightly-8-gpu-mi350")
register_rocm_ci(1600, "stage-e-8-gpu-mi350")
