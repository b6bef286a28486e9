register_rocm_ci(600, "stage-c-4-gpu-mi350")

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    "--num-layers 8 "
    "--pipeline-model-parallel-size 4 "
    "--num-layers-per-virtual-pipeline-stage 1 "
))
