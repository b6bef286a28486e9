register_rocm_ci(600, "stage-c-8-gpu-mi350")

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 8 "
    "--colocate "
    "--num-attention-heads 12 "
    "--num-query-groups 4 "
    "--tensor-model-parallel-size 8 "  # [PAR010]
))
