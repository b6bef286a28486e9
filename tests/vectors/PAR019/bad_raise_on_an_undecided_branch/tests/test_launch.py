import os

register_rocm_ci(600, "stage-c-4-gpu-mi350")

for name in ("gsm8k", "math"):
    if os.path.exists(f"/data/{name}"):
        continue
    raise RuntimeError(f"dataset {name} missing")  # [PAR019]

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    "--tensor-model-parallel-size 3 "
))
