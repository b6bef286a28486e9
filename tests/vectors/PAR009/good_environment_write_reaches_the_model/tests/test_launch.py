import os

register_rocm_ci(600, "stage-c-4-gpu-mi350")

MODEL_TYPE = "tiny"
os.environ["MODEL_ARGS_NUM_LAYERS"] = "6"

execute_train(train_args=(
    "--actor-num-nodes 1 "
    "--actor-num-gpus-per-node 4 "
    "--colocate "
    "--pipeline-model-parallel-size 2 "
))
