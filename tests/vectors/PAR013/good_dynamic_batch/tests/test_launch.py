register_rocm_ci(600, "stage-c-4-gpu-mi350")

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    "--global-batch-size 6 "
    "--micro-batch-size 1 "
    "--use-dynamic-batch-size "
))
