FEW_GPU = True

register_rocm_ci(600, "stage-c-4-gpu-mi350")

args = ["--actor-num-nodes 1", "--colocate", "--tensor-model-parallel-size 2"]
if FEW_GPU:
    args.append("--actor-num-gpus-per-node 2")
else:
    args.append("--actor-num-gpus-per-node 8")
    args.append("--use-dynamic-batch-size")

execute_train(train_args=" ".join(args))
