from external_tool import build_args

register_rocm_ci(600, "stage-c-4-gpu-mi350")

execute_train(train_args=build_args("qwen3"), num_gpus_per_node=unknown_count())  # [PAR019]
