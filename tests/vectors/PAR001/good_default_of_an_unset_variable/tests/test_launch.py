import os

from tests.helpers.env import get_bool_env_var

register_rocm_ci(600, "stage-c-4-gpu-mi350")

FEW_GPU = get_bool_env_var("MILES_TEST_FEW_GPU", "0")
TP = int(os.environ.get("TP_SIZE") or 2)
GPUS = os.getenv("NUM_GPUS", "4")

execute_train(train_args=(
    "--actor-num-nodes 1 "
    f"--actor-num-gpus-per-node {2 if FEW_GPU else GPUS} "
    "--colocate "
    f"--tensor-model-parallel-size {TP} "
))
