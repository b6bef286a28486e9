import os

register_rocm_ci(600, "stage-c-4-gpu-mi350")

args = ["--actor-num-nodes 1", "--colocate", "--tensor-model-parallel-size 2"]
if os.environ.get("FEW_GPU"):  # [PAR019]
    args.append("--actor-num-gpus-per-node 2")
else:
    args.append("--actor-num-gpus-per-node 4")
    args.append("--use-dynamic-batch-size")
if os.environ.get("BIG"):  # [PAR019]
    args += ["--pipeline-model-parallel-size", "8"]

execute_train(train_args=" ".join(args))
