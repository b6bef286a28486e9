"""The validators of a configuration file (pydantic models), imported only to read one.

An analysis of a repository without `.github/rocmbot.yml` never imports this module (nor
pydantic): it uses the defaults of :mod:`config.repo` as they are. The models mirror the
dataclasses there field for field (a test checks both give the same defaults), and what
they accept is converted to those dataclasses (:func:`config.repo.validate`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from config.globs import glob_problem

Backend = Literal["cpu", "cuda", "rocm"]


class Model(BaseModel):
    # defer_build: a model's validator is built when a configuration file is first
    # validated, not when this module is imported
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def _globs(value: list[str]) -> list[str]:
    """A list of globs, each valid (:mod:`config.globs`): an invalid one fails its key."""
    for pattern in value:
        problem = glob_problem(pattern)
        if problem is not None:
            raise ValueError(f"{pattern!r} is not a valid glob: {problem}")
    return value


class Suite(Model):
    """A CI suite: how many GPUs its runner has, which CI runs it (null: read from the
    workflows), and whether PR runs may use it."""

    gpus: int | None = Field(default=None, ge=0, le=1024)
    cadence: Literal["per-pr", "nightly", "external"] | None = None
    per_pr: bool = True


class PinGroupConfig(Model):
    """One configured pin group: globs of its Dockerfiles, workflows and requirements files."""

    dockerfiles: list[str] = Field(default_factory=list)
    workflows: list[str] = Field(default_factory=list)
    requirements: list[str] = Field(default_factory=list)

    _globs = field_validator("dockerfiles", "workflows", "requirements")(_globs)


class PinsConfig(Model):
    """Dependency-pin checking: explicit groups (empty: inferred), ignored packages."""

    groups: dict[str, PinGroupConfig] = Field(default_factory=dict)
    ignore: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)

    _globs = field_validator("exclude")(_globs)


class LaunchConfig(Model):
    """Launch resolution and the PAR rules: defaults of flags a launch does not set, where
    the model script lives, and what platform a marker's backend means."""

    enabled: bool = True
    flavor: Literal["miles", "slime"] | None = None
    actor_num_nodes: int = Field(default=1, ge=1, le=4096)
    actor_num_gpus_per_node: int = Field(default=8, ge=1, le=1024)
    rollout_num_gpus_per_engine: int = Field(default=1, ge=1, le=1024)
    model_script: str = "scripts/models/{MODEL_TYPE}.py"
    model_function: str = "model_args"
    model_type_names: list[str] = Field(default_factory=lambda: ["MODEL_TYPE"])
    model_type_keywords: list[str] = Field(
        default_factory=lambda: ["megatron_model_type", "model_type"])
    platform_env: dict[str, dict[Backend, str | None]] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    sinks: list[str] = Field(default_factory=lambda: ["execute_train"])
    servers: list[str] = Field(default_factory=lambda: [
        "popen_launch_server", "popen_launch_pd_server", "run_bench_serving",
        "ModelLaunchSettings"])
    server_keywords: list[str] = Field(default_factory=lambda: ["Engine", "ServerArgs"])
    quiet_calls: list[str] = Field(default_factory=lambda: ["get_default_wandb_args"])
    max_steps: int = Field(default=200_000, ge=1_000, le=10_000_000)
    max_depth: int = Field(default=16, ge=1, le=64)


class MatrixTestsConfig(Model):
    """Tests a workflow job lists in its `strategy.matrix` rather than by marker calls."""

    enabled: bool = True
    file_keys: list[str] = Field(default_factory=lambda: ["test_file"])
    gpu_keys: list[str] = Field(default_factory=lambda: ["num_gpus"])
    backends: dict[str, Backend] = Field(default_factory=dict)


class FailureRule(Model):
    """A pattern that explains a failed job's log (see `config/failures.yml`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, populate_by_name=True)

    id: str = Field(min_length=1, max_length=100)
    pattern: str = Field(min_length=1, max_length=2000)
    kind: Literal["infrastructure", "predicted"] = Field(alias="class")
    explanation: str = Field(min_length=1, max_length=300)
    rule: str | None = None
    vectors: list[str] = Field(default_factory=list)

    @field_validator("pattern")
    @classmethod
    def _regex(cls, value: str) -> str:
        import re

        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        return value


class DispatchConfig(Model):
    """ROCm runs: the workflow to dispatch, who may, and the budgets above which a
    maintainer approves."""

    workflow: str = ".github/workflows/rocm-targeted.yml"
    ref: str | None = None
    mode: Literal["targeted", "complement"] = "targeted"
    auto: Literal["trusted", "off"] = "trusted"
    cancel_stale: bool = True
    cancel_on_close: bool = True
    trusted_users: list[str] = Field(default_factory=list)
    trusted_teams: list[str] = Field(default_factory=list)
    maintainers: list[str] = Field(default_factory=list)
    maintainer_teams: list[str] = Field(default_factory=list)
    budget_gpu_minutes_per_head: float = Field(default=480, ge=0)
    budget_gpu_minutes_per_day: float = Field(default=4000, ge=0)
    allow_bots: bool = False
    allow_edited: bool = False
    command_prefixes: list[str] = Field(default_factory=list)

    @field_validator("command_prefixes")
    @classmethod
    def _prefixes(cls, value: list[str]) -> list[str]:
        for prefix in value:
            if not prefix.startswith("/") or len(prefix) < 2 or any(c.isspace() for c in prefix):
                raise ValueError(f"a command prefix is a `/word` with no space: {prefix!r}")
        return value

    @field_validator("trusted_teams", "maintainer_teams")
    @classmethod
    def _teams(cls, value: list[str]) -> list[str]:
        for team in value:
            if team.count("/") != 1 or not all(team.split("/")):
                raise ValueError(f"{team!r}: name a team as org/team-slug")
        return value


class ReenableConfig(Model):
    """The re-enable sweep of parked ROCm tests."""

    sweep: Literal["off", "daily", "weekly"] = "off"
    budget_gpu_minutes: float = Field(default=600, ge=0)
    issue: bool = True

    @field_validator("sweep", mode="before")
    @classmethod
    def _off(cls, value: object) -> object:
        # YAML 1.1 reads a bare `off` as false
        return "off" if value is False else value


class RepoConfig(Model):
    """The effective policy for one repository."""

    markers: dict[str, Backend]
    test_roots: list[str] = Field(default_factory=lambda: ["tests", "test"])
    tests: list[str] = Field(default_factory=list)
    exclude: list[str]
    python_roots: list[str] = Field(min_length=1)
    suites: dict[str, Suite]
    harness: list[str] = Field(default_factory=list)
    select_imports: bool = False
    select_fanout: list[str] = Field(default_factory=list)
    select_nightly: bool
    select_external: bool = False
    environment: list[str]
    pins: PinsConfig = Field(default_factory=PinsConfig)
    launch: LaunchConfig = Field(default_factory=LaunchConfig)
    matrix_tests: MatrixTestsConfig = Field(default_factory=MatrixTestsConfig)
    failures: list[FailureRule] = Field(default_factory=list)
    dispatch: DispatchConfig = Field(default_factory=DispatchConfig)
    reenable: ReenableConfig = Field(default_factory=ReenableConfig)
    max_file_bytes: int = Field(ge=1024, le=64 * 1024 * 1024)

    _globs = field_validator("tests", "exclude", "harness", "environment")(_globs)

    @field_validator("markers")
    @classmethod
    def _identifiers(cls, value: dict[str, Backend]) -> dict[str, Backend]:
        for name in value:
            if not name.isidentifier():
                raise ValueError(f"{name!r} is not a Python identifier")
        return value

    @field_validator("python_roots", "test_roots")
    @classmethod
    def _roots(cls, value: list[str]) -> list[str]:
        cleaned = []
        for root in value:
            clean = root.strip("/") or "."
            if "/../" in f"/{clean}/":
                raise ValueError(f"{root!r} leaves the repository")
            cleaned.append(clean)
        return cleaned
