register_rocm_ci(600, "stage-c-4-gpu-mi350")

# SGLang sets its expert parallel size to the TP size (4) with DeepEP: 8 is not what runs
execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    "--rollout-num-gpus-per-engine 4 "
    "--sglang-moe-a2a-backend deepep --sglang-deepep-mode auto "
    "--sglang-expert-parallel-size 8 "
))
