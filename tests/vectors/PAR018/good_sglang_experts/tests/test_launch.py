register_rocm_ci(600, "stage-c-8-gpu-mi350")

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 8 "
    "--colocate "
    "--num-experts 60 "
    "--rollout-num-gpus-per-engine 8 "
    "--sglang-ep-size 4 "
))
