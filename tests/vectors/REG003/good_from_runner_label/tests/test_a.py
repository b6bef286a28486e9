register_amd_ci(600, "jit-kernel-unit-test-amd")
register_amd_ci(600, "jit-kernel-benchmark-test-amd")
