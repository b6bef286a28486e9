from tests.ci.ci_register import register_rocm_ci

register_rocm_ci(1600, "stage-c-4-gpu-mi350", labels=["moe"])
register_rocm_ci(1600, "stage-c-4-gpu-mi350", labels=["moe"], stage="stage-c")  # [REG002]
register_rocm_ci(1600, "stage-c-4-gpu-mi350", True, labels=["moe"])  # [REG002]
register_rocm_ci(1600, "stage-c-4-gpu-mi350")  # [REG002]
