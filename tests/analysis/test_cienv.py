"""The CI environment per backend: what workflows and images set, what nothing sets, and
the platform variable."""

from __future__ import annotations

from pathlib import Path

from bot.analysis.cienv import ci_environment
from bot.analysis.dockerfile import parse_dockerfile
from bot.analysis.snapshot import Snapshot
from bot.analysis.tree import FolderTree
from bot.analysis.values import Unknown
from bot.analysis.workflows import EnvSetting, workflow_env
from config.repo import RepoConfig, default_data, defaults, merge

ROCM = """\
on: pull_request
env:
  WORKFLOW_WIDE: "1"
jobs:
  call:
    uses: ./.github/workflows/_run-gpu.yml
  elsewhere:
    uses: ./.github/workflows/not-here.yml
"""

REUSABLE = """\
on: workflow_call
jobs:
  run:
    container:
      image: x
      options: --device=/dev/kfd --env HIP_VISIBLE_DEVICES -e RENDER=1
    env:
      MY_PLATFORM: rocm
      SHA: ${{ github.sha }}
      BOTH: "a"
    steps:
      - run: echo "FROM_STEP=1" >> $GITHUB_ENV
        env:
          STEP_ONLY: "x"
          BOTH: "a"
      - run: echo "$(compute)" >> "$GITHUB_ENV"
  back:
    uses: ./.github/workflows/pr-test-rocm.yml
"""

CUDA = """\
on: pull_request
jobs:
  run:
    env:
      MY_PLATFORM: cuda
      WORKFLOW_WIDE: "2"
    steps:
      - run: pytest
"""


def _snapshot(tmp_path: Path, files: dict[str, str]) -> Snapshot:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return Snapshot(FolderTree(tmp_path), defaults())


def test_workflow_env_reads_every_level_and_what_cannot_be_known() -> None:
    found = workflow_env(REUSABLE)
    assert EnvSetting("MY_PLATFORM", "rocm", "job") in found
    assert EnvSetting("SHA", None, "job") in found
    assert EnvSetting("HIP_VISIBLE_DEVICES", None, "job") in found
    assert EnvSetting("RENDER", None, "job") in found
    assert EnvSetting("STEP_ONLY", "x", "step") in found
    assert EnvSetting("FROM_STEP", None, "job") in found
    assert EnvSetting(None, None, "job") in found  # a computed $GITHUB_ENV write
    assert workflow_env("env: ${{ fromJSON(inputs.env) }}\n") == [EnvSetting(None, None, "workflow")]
    assert workflow_env("jobs: [unclosed\n") == []
    assert workflow_env("") == []


def test_dockerfile_env_is_the_final_stage() -> None:
    parsed = parse_dockerfile("Dockerfile", "FROM a AS build\nENV X=1\nFROM b\nENV Y=2 Z=3\n")
    assert parsed.env == (("Y", "2"), ("Z", "3"))
    assert parse_dockerfile("Dockerfile", "# nothing\n").env == ()


def test_each_backend_sees_its_own_workflows_and_image(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, {
        ".github/workflows/pr-test-rocm.yml": ROCM,
        ".github/workflows/_run-gpu.yml": REUSABLE,  # ROCm: the ROCm workflow calls it
        ".github/workflows/pr-test.yml": CUDA,
        "docker/Dockerfile.rocm": "FROM x\nENV IMAGE_ONLY=yes\nENV ARCH=$GPU_ARCH\n",
        "tests/test_x.py": 'import os\nregister_rocm_ci(60, "stage-a-1-gpu-mi350")\n'
                           'P = os.getenv("MY_PLATFORM") == "rocm"\n',
    })
    env = ci_environment(snapshot)
    rocm, cuda = env.values["rocm"], env.values["cuda"]
    assert env.closed == {"rocm": False, "cuda": True, "cpu": True}  # a computed $GITHUB_ENV name
    assert rocm["WORKFLOW_WIDE"] == "1" and cuda["WORKFLOW_WIDE"] == "2"
    assert rocm["IMAGE_ONLY"] == "yes" and "IMAGE_ONLY" not in cuda
    assert rocm["BOTH"] == "a"
    for name in ("SHA", "HIP_VISIBLE_DEVICES", "STEP_ONLY", "FROM_STEP", "ARCH"):
        assert isinstance(rocm[name], Unknown), name
    assert env.platform == ("MY_PLATFORM",)
    assert rocm["MY_PLATFORM"] == "rocm" and cuda["MY_PLATFORM"] is None
    assert "WORKFLOW_WIDE" in env.differing and "MY_PLATFORM" in env.differing


def test_a_variable_set_to_two_values_is_not_known(tmp_path: Path) -> None:
    snapshot = _snapshot(tmp_path, {
        ".github/workflows/a-rocm.yml": "jobs:\n  a:\n    env:\n      N: '1'\n    steps: []\n",
        ".github/workflows/b-rocm.yml": "jobs:\n  b:\n    env:\n      N: '2'\n    steps: []\n",
    })
    env = ci_environment(snapshot)
    assert isinstance(env.values["rocm"]["N"], Unknown)
    assert env.closed["rocm"] and not env.closed["cuda"]  # no workflow of its own: not known
    assert env.platform == ()


def test_the_configuration_overrides_what_is_inferred(tmp_path: Path) -> None:
    files = {".github/workflows/pr-test-rocm.yml": "jobs:\n  a:\n    env:\n      HW: rocm\n    steps: []\n",
             "tests/test_x.py": 'import os\nregister_rocm_ci(60, "stage-a-1-gpu-mi350")\n'
                                'P = os.getenv("HW")\n'}
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    config = RepoConfig.model_validate(merge(default_data(), {"launch": {
        "platform_env": {"HW": {"rocm": "amd", "cuda": "nv"}}, "env": {"FIXED": "3"}}}))
    env = ci_environment(Snapshot(FolderTree(tmp_path), config))
    assert env.values["rocm"]["HW"] == "amd" and env.values["cuda"]["HW"] == "nv"
    assert env.values["cpu"]["HW"] is None
    assert env.values["cuda"]["FIXED"] == "3"


def test_unreadable_places_leave_the_environment_not_known(tmp_path: Path) -> None:
    bad = b"\xff\xfe\x00not text"
    for path in (".github/workflows/pr-test-rocm.yml", "docker/Dockerfile.rocm", "tests/test_a.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(bad)
    (tmp_path / ".github/workflows/x-amd.yml").write_text(
        "jobs:\n  a:\n    env:\n      HW: amd\n      UNUSED: hip\n    steps: []\n")
    (tmp_path / "tests/test_b.py").write_text('register_rocm_ci(60, "stage-a-1-gpu-mi350")\nHW = "HW"\n')
    env = ci_environment(Snapshot(FolderTree(tmp_path), defaults()))
    assert not env.closed["rocm"]
    assert env.platform == ("HW",)
