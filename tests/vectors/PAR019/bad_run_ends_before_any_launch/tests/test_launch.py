from enum import Enum

register_rocm_ci(600, "stage-c-4-gpu-mi350")


class Parser(Enum):
    QWEN = "qwen3"


def check(name):
    if Parser(name).value != name:
        raise ValueError("unknown parser")
    raise NotImplementedError("the launch moved elsewhere")  # [PAR019]


check("qwen3")
execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
))
