register_rocm_ci(600, "stage-c-8-gpu-mi350")

# SGLang stops only a block-quantized model: a warning
execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 6 "
    "--colocate "
    "--rollout-num-gpus-per-engine 6 "
    "--sglang-ep-size 4 "  # [PAR005]
))
