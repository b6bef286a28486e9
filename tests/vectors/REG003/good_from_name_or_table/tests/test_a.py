register_rocm_ci(1600, "stage-c-big")
register_cuda_ci(1600, "stage-c-2-gpu-h100")
