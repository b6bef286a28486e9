from tests.ci.register import register_rocm_ci

register_rocm_ci(1600, stage="stage-c", runner="4-gpu-mi350")
