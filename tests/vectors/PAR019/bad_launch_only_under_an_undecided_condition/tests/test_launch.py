import os

register_rocm_ci(600, "stage-c-4-gpu-mi350")

if os.path.exists("/data/ready"):
    execute_train(train_args=(  # [PAR019]
        "--actor-num-nodes 1 "
        "--actor-num-gpus-per-node 4 "
        "--colocate "
        "--tensor-model-parallel-size 3 "
    ))
