import os

register_rocm_ci(600, "stage-c-4-gpu-mi350")


def check_data():
    if os.path.exists("/data/ready"):
        return
    raise RuntimeError("dataset missing")


check_data()
execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    "--tensor-model-parallel-size 2 "
))
