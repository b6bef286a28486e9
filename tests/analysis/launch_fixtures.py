"""Small repositories shaped like miles/slime, for the launch-resolution tests (V1..V10 of
RULES.md, and twenty valid launches in every style the target repositories use)."""
# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

WORKFLOW = """\
jobs:
  test:
    steps:
      - run: python tests/ci/run_suite.py --suite stage-c-4-gpu-mi350 --suite stage-c-8-gpu-mi350 --suite stage-c-8-gpu-h200 --suite stage-b-1-gpu-mi350
"""

HARNESS = '''\
"""Shared harness of the Megatron end-to-end tests."""

import os
from dataclasses import dataclass, field

from miles.utils.external_utils import command_utils

MODEL_TYPE = "qwen3.5-35B-A3B"


@dataclass
class CaseConfig:
    num_gpus_per_node: int = 8
    tp_size: int = 1
    pp_size: int = 1
    cp_size: int = 1
    ep_size: int = 1
    rollout_num_gpus_per_engine: int = 1
    sglang_ep_size: int | None = None
    sglang_dp_size: int | None = None
    sglang_enable_dp_attention: bool = False
    colocate: bool = True
    rollout_num_gpus: int | None = None
    extra_args: str = ""
    extra_env_vars: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not self.colocate and self.rollout_num_gpus is None:
            raise ValueError("rollout_num_gpus must be set when colocate is False")


def build_train_args(case: CaseConfig) -> str:
    enable_eval = bool(int(os.environ.get("MILES_TEST_ENABLE_EVAL", "0")))
    perf_args = (
        f"--tensor-model-parallel-size {case.tp_size} "
        "--sequence-parallel "
        f"--pipeline-model-parallel-size {case.pp_size} "
        f"--context-parallel-size {case.cp_size} "
        f"--expert-model-parallel-size {case.ep_size} "
        "--expert-tensor-parallel-size 1 "
        "--use-dynamic-batch-size "
    )
    eval_args = f"{'--eval-interval 20 ' if enable_eval else ''}--n-samples-per-eval-prompt 1 "
    sglang_args = f"--rollout-num-gpus-per-engine {case.rollout_num_gpus_per_engine} "
    if case.sglang_ep_size is not None:
        sglang_args += f"--sglang-expert-parallel-size {case.sglang_ep_size} "
    if case.sglang_dp_size is not None:
        sglang_args += f"--sglang-data-parallel-size {case.sglang_dp_size} "
    if case.sglang_enable_dp_attention:
        sglang_args += "--sglang-enable-dp-attention "
    misc_args = (
        "--actor-num-nodes 1 "
        f"--actor-num-gpus-per-node {case.num_gpus_per_node} "
    )
    if case.colocate:
        misc_args += "--colocate "
    else:
        misc_args += f"--rollout-num-gpus {case.rollout_num_gpus} "
    return (
        f"{perf_args} {eval_args} {sglang_args} "
        f"{command_utils.get_default_wandb_args(__file__)} {misc_args} {case.extra_args} "
    )


def execute(case: CaseConfig) -> None:
    U = command_utils.default_config().create_backend()
    U.execute_train(
        train_args=build_train_args(case),
        num_gpus_per_node=case.num_gpus_per_node,
        megatron_model_type=MODEL_TYPE,
        extra_env_vars=case.extra_env_vars,
    )
'''

QWEN35 = '''\
def model_args() -> str:
    return (
        "--num-layers 40 "
        "--hidden-size 2048 "
        "--num-attention-heads 16 "
        "--group-query-attention "
        "--num-query-groups 2 "
        "--num-experts 256 "
    )
'''

QWEN3_30B = '''\
NUM_LAYERS = 48


def model_args():
    return [
        f"--num-layers {NUM_LAYERS}",
        "--num-attention-heads 32",
        "--num-query-groups 4",
        "--num-experts 128",
    ]
'''

DENSE_36 = '''\
def model_args():
    return "--num-layers 36 --num-attention-heads 32 --num-query-groups 8 "
'''

COMMAND_UTILS = '''\
import os


def get_default_wandb_args(path):
    if os.environ.get("WANDB_API_KEY"):
        return f"--use-wandb --wandb-group {path} "
    return ""


def default_config():
    return _Config()
'''

BASE: dict[str, str] = {
    ".github/workflows/ci.yml": WORKFLOW,
    # the ROCm image says which platform it is (the platform variable is inferred from it)
    "docker/Dockerfile.rocm": "FROM rocm/base\nENV MILES_PLATFORM=rocm\n",
    "tests/__init__.py": "",
    "tests/e2e/__init__.py": "",
    "tests/e2e/megatron/__init__.py": "",
    "tests/e2e/megatron/_common.py": HARNESS,
    "miles/__init__.py": "",
    "miles/utils/__init__.py": "",
    "miles/utils/external_utils/__init__.py": "",
    "miles/utils/external_utils/command_utils.py": COMMAND_UTILS,
    "scripts/models/qwen3.5-35B-A3B.py": QWEN35,
    "scripts/models/qwen3-30B-A3B.py": QWEN3_30B,
    "scripts/models/dense-36.py": DENSE_36,
}


def case_test(suite: str, case: str, extra: str = "") -> str:
    """A test built on the dataclass harness: ``case`` is the body of ``CaseConfig(...)``."""
    return (
        "from tests.e2e.megatron._common import CaseConfig, execute\n"
        "\n"
        f'register_rocm_ci(1600, "{suite}")\n'
        "\n"
        f"CASE = CaseConfig(\n{case})\n"
        f"{extra}"
        "\n"
        'if __name__ == "__main__":\n'
        "    execute(CASE)\n"
    )


def raw_test(suite: str, flags: str, model: str | None = None) -> str:
    """A test with its own flag strings (``flags``: lines of string literals)."""
    model_line = f'MODEL_TYPE = "{model}"\n' if model else ""
    return (
        "from miles.utils.external_utils import command_utils\n"
        "\n"
        f'register_rocm_ci(1200, "{suite}")\n'
        f"{model_line}"
        "NUM_GPUS = 4\n"
        "\n"
        "\n"
        "def execute():\n"
        "    U = command_utils.default_config().create_backend()\n"
        "    train_args = (\n"
        f"{flags}"
        "    )\n"
        "    U.execute_train(train_args=train_args, num_gpus_per_node=NUM_GPUS,\n"
        f"                    megatron_model_type={'MODEL_TYPE' if model else 'None'})\n"
        "\n"
        "\n"
        'if __name__ == "__main__":\n'
        "    execute()\n"
    )


V1_CASE = """\
    num_gpus_per_node=4,
    cp_size=1,
    pp_size=2,
    tp_size=2,
    ep_size=4,
    rollout_num_gpus_per_engine=4,
    sglang_ep_size=4,
"""

VECTORS: dict[str, dict[str, str]] = {
    "V1": {"tests/e2e/megatron/test_v1.py": case_test("stage-c-4-gpu-mi350", V1_CASE)},
    "V2": {"tests/e2e/megatron/test_v2.py": case_test(
        "stage-c-4-gpu-mi350", V1_CASE.replace("ep_size=4,\n    roll", "ep_size=2,\n    roll"))},
    "V3": {"tests/e2e/megatron/test_v3.py": raw_test("stage-c-8-gpu-mi350", (
        '        "--actor-num-nodes 1 "\n'
        '        "--actor-num-gpus-per-node 8 "\n'
        '        "--colocate "\n'
        '        "--tensor-model-parallel-size 1 "\n'
        '        "--pipeline-model-parallel-size 2 "\n'
        '        "--expert-model-parallel-size 8 "\n'
        '        "--expert-tensor-parallel-size 1 "\n'
        '        "--rollout-num-gpus-per-engine 8 "\n'
    ), model="qwen3-30B-A3B")},
    "V4": {"tests/e2e/fsdp/test_v4.py": raw_test("stage-c-4-gpu-mi350", (
        '        "--train-backend fsdp "\n'
        '        f"--dp-replicate-size {DP_REPLICATE_SIZE} "\n'
        '        "--rollout-num-gpus-per-engine 1 "\n'
        '        "--actor-num-nodes 1 "\n'
        '        f"--actor-num-gpus-per-node {NUM_GPUS} "\n'
        '        "--colocate "\n'
    )).replace("NUM_GPUS = 4\n", "NUM_GPUS = 4\nDP_REPLICATE_SIZE = 2\n")},
    "V6": {"tests/e2e/megatron/test_v6.py": raw_test("stage-c-8-gpu-mi350", (
        '        "--actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate "\n'
        '        "--tensor-model-parallel-size 1 "\n'
        '        "--pipeline-model-parallel-size 8 "\n'
    ), model="dense-36")},
    "V7": {"tests/e2e/megatron/test_v7.py": case_test("stage-c-4-gpu-mi350", """\
    num_gpus_per_node=4,
    tp_size=2,
    cp_size=4,
""")},
    "V8": {"tests/e2e/megatron/test_v8.py": case_test("stage-c-4-gpu-mi350", """\
    num_gpus_per_node=4,
    rollout_num_gpus_per_engine=4,
    sglang_dp_size=4,
""")},
    "V8-ok": {"tests/e2e/megatron/test_v8.py": case_test("stage-c-4-gpu-mi350", """\
    num_gpus_per_node=4,
    rollout_num_gpus_per_engine=4,
    sglang_dp_size=4,
    sglang_enable_dp_attention=True,
""")},
    "V9": {"tests/e2e/megatron/test_v9.py": case_test("stage-c-4-gpu-mi350", """\
    num_gpus_per_node=4,
    colocate=False,
    rollout_num_gpus=4,
""")},
    "V10": {"tests/e2e/megatron/test_v10.py": raw_test("stage-c-4-gpu-mi350", (
        '        "--actor-num-nodes 1 "\n'
        '        "--colocate "\n'
        '        "--rollout-num-gpus-per-engine 4 "\n'
    ))},
}
VECTORS["V5"] = {
    "tests/e2e/fsdp/test_v5.py": VECTORS["V4"]["tests/e2e/fsdp/test_v4.py"].replace(
        "DP_REPLICATE_SIZE = 2", "DP_REPLICATE_SIZE = 3")
}


def write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text, encoding="utf-8")
    return root


# ----- twenty valid launches in every style -------------------------------------------------

SCRIPT = '''\
"""Qwen3-30B-A3B GRPO: `python scripts/{name}.py --num-gpus-per-node 4`."""

from dataclasses import dataclass

import miles.utils.external_utils.command_utils as U


@dataclass
class ScriptArgs:
    num_nodes: int = 1
    num_gpus_per_node: int = 8
    megatron_model_type: str = "qwen3-30B-A3B"
    rollout_gpus_per_engine: int = 0
    extra_args: str = ""

    def __post_init__(self):
        if self.rollout_gpus_per_engine == 0:
            self.rollout_gpus_per_engine = self.num_gpus_per_node{engine_divisor}


def parallel_flags(num_gpus: int) -> str:
    if num_gpus >= 8:
        return "--tensor-model-parallel-size 4 --expert-model-parallel-size 8 "
    return (
        f"--tensor-model-parallel-size {{num_gpus // 2}} "
        f"--expert-model-parallel-size {{num_gpus}} "
    )


def train(args: ScriptArgs) -> None:
    train_args = (
        parallel_flags(args.num_gpus_per_node)
        + "--sequence-parallel --expert-tensor-parallel-size 1 "
        + f"--actor-num-nodes {{args.num_nodes}} --actor-num-gpus-per-node {{args.num_gpus_per_node}} "
        + "--colocate "
        + f"--rollout-num-gpus-per-engine {{args.rollout_gpus_per_engine}} "
        + args.extra_args
    )
    U.execute_train(
        train_args=train_args,
        num_gpus_per_node=args.num_gpus_per_node,
        megatron_model_type=args.megatron_model_type,
    )
'''

SCRIPT_TEST = '''\
import os

if os.getenv("MILES_PLATFORM") == "rocm":
    from scripts.run_qwen3_30b_rocm import ScriptArgs, train
else:
    from scripts.run_qwen3_30b import ScriptArgs, train

register_cuda_ci(1500, "stage-c-8-gpu-h200")
register_rocm_ci(1600, "stage-c-4-gpu-mi350")

if __name__ == "__main__":
    train(ScriptArgs(num_gpus_per_node=4{extra}))
'''

LOOP_TEST = '''\
from tests.e2e.megatron._common import CaseConfig, execute

register_rocm_ci(3000, "stage-c-4-gpu-mi350")

NUM_GPUS = 4
SHAPES = [
    {"tp": 1, "ep": 1, "gpus": 4},
    {"tp": 2, "ep": 2, "gpus": 4},
    {"tp": 4, "ep": 8, "gpus": 8},
    {"tp": 2, "ep": 4, "gpus": 4},
]


def main():
    for shape in SHAPES:
        if shape["gpus"] > NUM_GPUS:
            continue
        execute(CaseConfig(
            num_gpus_per_node=shape["gpus"],
            tp_size=shape["tp"],
            ep_size=shape["ep"],
            rollout_num_gpus_per_engine=shape["gpus"],
        ))


if __name__ == "__main__":
    main()
'''

PYTEST_TEST = '''\
import pytest

from tests.e2e.megatron._common import CaseConfig, execute

register_rocm_ci(2000, "stage-c-4-gpu-mi350")


@pytest.mark.parametrize("tp,pp", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_layouts(tp, pp):
    execute(CaseConfig(num_gpus_per_node=4, tp_size=tp, pp_size=pp))
'''

MATCH_TEST = '''\
import os

from miles.utils.external_utils import command_utils

register_rocm_ci(900, "stage-c-4-gpu-mi350")
register_cuda_ci(900, "stage-c-8-gpu-h200")

MODEL_TYPE = "qwen3.5-35B-A3B"


def layout() -> str:
    match os.getenv("MILES_PLATFORM"):
        case "rocm":
            return "--tensor-model-parallel-size 2 --expert-model-parallel-size 2 "
        case _:
            return "--tensor-model-parallel-size 4 --expert-model-parallel-size 2 "


def gpus() -> int:
    return 4 if os.getenv("MILES_PLATFORM") == "rocm" else 8


if __name__ == "__main__":
    U = command_utils.default_config().create_backend()
    args = [layout(), "--sequence-parallel", "--actor-num-nodes 1",
            f"--actor-num-gpus-per-node {gpus()}", "--colocate",
            f"--rollout-num-gpus-per-engine {gpus()}"]
    U.execute_train(train_args=" ".join(args), megatron_model_type=MODEL_TYPE)
'''

UNRESOLVED_TEST = '''\
import os

from miles.utils.external_utils import command_utils

register_rocm_ci(900, "stage-c-4-gpu-mi350")

TP = int(os.environ.get("TP_SIZE", "2"))

if __name__ == "__main__":
    U = command_utils.default_config().create_backend()
    U.execute_train(train_args=(
        f"--tensor-model-parallel-size {TP} "
        "--actor-num-nodes 1 --actor-num-gpus-per-node 4 --colocate "
        "--rollout-num-gpus-per-engine 2 "
    ))
'''

GUARDED_TEST = '''\
import os

from miles.utils.external_utils import command_utils

register_rocm_ci(900, "stage-c-4-gpu-mi350")

if __name__ == "__main__":
    if os.environ.get("RUN_BIG"):
        U = command_utils.default_config().create_backend()
        U.execute_train(train_args="--actor-num-nodes 1 --actor-num-gpus-per-node 16 --colocate ")
'''

STYLES: dict[str, str] = {
    # dataclass harness, extra_args overriding the harness's flags (a later flag wins)
    "tests/e2e/megatron/test_s01_harness.py": case_test("stage-c-4-gpu-mi350", V1_CASE.replace(
        "ep_size=4,", "ep_size=4,\n    extra_args='--expert-model-parallel-size 2 ',")),
    "tests/e2e/megatron/test_s02_harness.py": case_test("stage-c-8-gpu-mi350", """\
    num_gpus_per_node=8,
    tp_size=2,
    pp_size=2,
    ep_size=2,
    rollout_num_gpus_per_engine=8,
    sglang_ep_size=8,
    sglang_dp_size=8,
    sglang_enable_dp_attention=True,
"""),
    "tests/e2e/megatron/test_s03_harness.py": case_test("stage-c-4-gpu-mi350", """\
    num_gpus_per_node=2,
    colocate=False,
    rollout_num_gpus=2,
    rollout_num_gpus_per_engine=2,
    extra_args="--tensor-model-parallel-size=2 ",
"""),
    # raw flag strings, module constants
    "tests/e2e/megatron/test_s04_raw.py": VECTORS["V3"]["tests/e2e/megatron/test_v3.py"].replace(
        '"--expert-model-parallel-size 8 "', '"--expert-model-parallel-size 4 "'),
    "tests/e2e/fsdp/test_s05_fsdp.py": VECTORS["V4"]["tests/e2e/fsdp/test_v4.py"],
    "tests/e2e/megatron/test_s06_constants.py": raw_test("stage-c-4-gpu-mi350", (
        '        f"--tensor-model-parallel-size {TP} "\n'
        '        f"--pipeline-model-parallel-size {PP} "\n'
        '        f"--actor-num-nodes 1 --actor-num-gpus-per-node {NUM_GPUS} --colocate "\n'
        '        f"--rollout-num-gpus-per-engine {NUM_GPUS // TP} "\n'
    ), model="dense-36").replace("NUM_GPUS = 4\n", "NUM_GPUS = 4\nTP = 2\nPP = 2\n"),
    # a ScriptArgs launch script chosen by a platform switch
    "tests/e2e/scripts/test_s07_script.py": SCRIPT_TEST.format(extra=""),
    "tests/e2e/scripts/test_s08_script.py": SCRIPT_TEST.format(
        extra=', extra_args="--sglang-ep-size 2 "'),
    # loops over shapes with continue (3 launches), pytest parametrize (4 launches)
    "tests/e2e/megatron/test_s09_loop.py": LOOP_TEST,
    "tests/e2e/megatron/test_s10_pytest.py": PYTEST_TEST,
    # match on the platform; the same file for CUDA (8 GPUs) and ROCm (4 GPUs)
    "tests/e2e/megatron/test_s11_match.py": MATCH_TEST,
    # unresolvable: PAR019 only
    "tests/e2e/megatron/test_s12_unresolved.py": UNRESOLVED_TEST,
    "tests/e2e/megatron/test_s13_guarded.py": GUARDED_TEST,
    "tests/e2e/megatron/test_s14_harness.py": VECTORS["V2"]["tests/e2e/megatron/test_v2.py"],
}

STYLE_FILES: dict[str, str] = {
    **BASE,
    "scripts/__init__.py": "",
    "scripts/run_qwen3_30b.py": SCRIPT.format(name="run_qwen3_30b", engine_divisor=""),
    "scripts/run_qwen3_30b_rocm.py": SCRIPT.format(name="run_qwen3_30b_rocm",
                                                   engine_divisor=" // 2"),
    **STYLES,
}
