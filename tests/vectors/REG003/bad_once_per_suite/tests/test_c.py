register_rocm_ci(1600, "stage-c-other")
