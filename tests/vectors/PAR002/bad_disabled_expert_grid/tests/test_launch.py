# A disabled test is checked too: its PAR002 is a warning that says it is disabled.
register_rocm_ci(600, "stage-c-4-gpu-mi350", disabled="FIXME: hangs on MI350")

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    "--tensor-model-parallel-size 2 "
    "--pipeline-model-parallel-size 2 "
    "--expert-model-parallel-size 4 "  # [PAR002]
    "--expert-tensor-parallel-size 1 "
    "--sequence-parallel "
))
