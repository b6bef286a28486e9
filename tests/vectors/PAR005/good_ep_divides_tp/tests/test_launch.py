register_rocm_ci(600, "stage-c-4-gpu-mi350")

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    "--rollout-num-gpus-per-engine 4 "
    "--sglang-expert-parallel-size 2 "
))
