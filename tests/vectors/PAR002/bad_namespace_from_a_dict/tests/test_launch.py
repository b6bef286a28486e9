import argparse

register_rocm_ci(600, "stage-c-4-gpu-mi350")

INVARIANTS = {"actor_num_nodes": 1, "ep": 2, "colocate": True}


def to_args(ns):
    parts = [
        f"--actor-num-nodes {ns.actor_num_nodes}",
        f"--actor-num-gpus-per-node {ns.gpus}",
        f"--expert-model-parallel-size {ns.ep}",
    ]
    if ns.colocate:
        parts.append("--colocate")
    return " ".join(parts)


kw = dict(INVARIANTS)
kw["ep"] = 8  # [PAR002]
execute_train(train_args=to_args(argparse.Namespace(gpus=4, **kw)))
