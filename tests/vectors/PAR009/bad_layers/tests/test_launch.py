register_rocm_ci(600, "stage-c-8-gpu-mi350")

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 8 "
    "--colocate "
    "--num-layers 36 "
    "--num-attention-heads 32 "
    "--pipeline-model-parallel-size 8 "  # [PAR009]
))
