import os

register_cuda_ci(600, "stage-c-8-gpu-h200")
register_rocm_ci(600, "stage-c-4-gpu-mi350")

if os.getenv("MY_HW_PLATFORM") == "rocm":
    GPUS = 4
    EP = 4
else:
    GPUS = 8
    EP = 8

execute_train(train_args=(
    "--actor-num-nodes 1 "
    f"--actor-num-gpus-per-node {GPUS} "
    "--colocate "
    f"--expert-model-parallel-size {EP} "
))
