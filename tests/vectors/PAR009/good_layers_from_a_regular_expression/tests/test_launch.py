import re

register_rocm_ci(600, "stage-c-4-gpu-mi350")

MODEL_NAME = "GLM-5_4layer"
LAYERS = m.group(1) if (m := re.search(r"(\d+)layer", MODEL_NAME)) is not None else "78"

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    "--pipeline-model-parallel-size 2 "
    f"--num-layers {LAYERS} "
))
