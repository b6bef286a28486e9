import os

register_rocm_ci(600, "stage-c-4-gpu-mi350")

TP = int(os.environ.get("TP_SIZE", "2"))

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    f"--tensor-model-parallel-size {TP} "
))
