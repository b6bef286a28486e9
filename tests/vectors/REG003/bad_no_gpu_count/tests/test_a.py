register_rocm_ci(1600, "stage-c-big")  # [REG003]
register_cpu_ci(60, "stage-a-lint")
