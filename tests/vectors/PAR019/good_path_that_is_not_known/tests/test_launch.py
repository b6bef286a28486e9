import os
from pathlib import Path

register_rocm_ci(600, "stage-c-4-gpu-mi350")

MEGATRON = Path(os.environ.get("MEGATRON_PATH", "/root/Megatron-LM"))
CKPT = os.path.join(os.environ.get("CKPT_ROOT"), "qwen3")

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    f"--load {CKPT} "
    f"{MEGATRON / 'tools'} "
    "--tensor-model-parallel-size 2 "
))
