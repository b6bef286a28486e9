register_rocm_ci(1600, "stage-c-big")  # [REG003]
register_rocm_ci(1600, "stage-c-other")  # [REG003]
