"""The per-repository configuration (`.github/rocmbot.yml`): model, defaults and loading.

The policy is plain frozen dataclasses, whose defaults are those of the packaged
`defaults.yml` (a test checks they are the same). Only a configuration file is validated,
by the pydantic models of :mod:`config.schema`: an analysis of a repository without one
imports neither pydantic nor PyYAML, which cost more to import than the rest of the
command line. The dataclasses answer the few model methods callers use (``model_dump``,
``model_copy``, ``model_validate``) as the models did.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from config import schema

CONFIG_PATHS = (".github/rocmbot.yml", ".github/rocmbot.yaml")
DEFAULT_SOURCE = "default"
MAX_HINTS = 100  # "did you mean" for the first unknown keys only

Backend = Literal["cpu", "cuda", "rocm"]
_M = TypeVar("_M", bound="_Model")


class _Model:
    """What the policy dataclasses answer of a pydantic model's interface."""

    __slots__ = ()

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The fields as plain data (``mode`` is accepted for pydantic's sake: every value
        is JSON data already)."""
        data = _plain(self)
        assert isinstance(data, dict)
        return data

    def model_copy(self: _M, *, update: dict[str, Any] | None = None) -> _M:
        """A copy with some fields replaced, unvalidated (as pydantic's)."""
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]


def _plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Suite(_Model):
    """A CI suite: how many GPUs its runner has, which CI runs it (null: read from the
    workflows), and whether PR runs may use it."""

    gpus: int | None = None
    cadence: Literal["per-pr", "nightly", "external"] | None = None
    per_pr: bool = True


@dataclass(frozen=True, slots=True)
class PinGroupConfig(_Model):
    """One configured pin group: globs of its Dockerfiles, workflows and requirements files."""

    dockerfiles: list[str] = field(default_factory=list)
    workflows: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PinsConfig(_Model):
    """Dependency-pin checking: explicit groups (empty: inferred), ignored packages."""

    groups: dict[str, PinGroupConfig] = field(default_factory=dict)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LaunchConfig(_Model):
    """Launch resolution and the PAR rules: defaults of flags a launch does not set, where
    the model script lives, and what platform a marker's backend means."""

    enabled: bool = True
    flavor: Literal["miles", "slime"] | None = None  # None: inferred (see launch.flavor_of)
    actor_num_nodes: int = 1
    actor_num_gpus_per_node: int = 8
    rollout_num_gpus_per_engine: int = 1
    model_script: str = "scripts/models/{MODEL_TYPE}.py"
    model_function: str = "model_args"
    model_type_names: list[str] = field(default_factory=lambda: ["MODEL_TYPE"])
    model_type_keywords: list[str] = field(
        default_factory=lambda: ["megatron_model_type", "model_type"])
    platform_env: dict[str, dict[Backend, str | None]] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    sinks: list[str] = field(default_factory=lambda: ["execute_train"])
    servers: list[str] = field(default_factory=lambda: [
        "popen_launch_server", "popen_launch_pd_server", "run_bench_serving",
        "ModelLaunchSettings"])
    server_keywords: list[str] = field(default_factory=lambda: ["Engine", "ServerArgs"])
    quiet_calls: list[str] = field(default_factory=lambda: ["get_default_wandb_args"])
    max_steps: int = 200_000
    max_depth: int = 16


@dataclass(frozen=True, slots=True)
class MatrixTestsConfig(_Model):
    """Tests a workflow job lists in its `strategy.matrix` (one combination per test file)
    rather than by marker calls: the keys that name the file and its GPUs,
    and the backend of a job whose runner, image and docker flags do not say."""

    enabled: bool = True
    file_keys: list[str] = field(default_factory=lambda: ["test_file"])
    gpu_keys: list[str] = field(default_factory=lambda: ["num_gpus"])
    backends: dict[str, Backend] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FailureRule(_Model):
    """A pattern that explains a failed job's log (see `config/failures.yml`): ``kind`` is
    its class, `infrastructure` or `predicted` (with the finding ``rule`` that foretells it)."""

    id: str
    pattern: str
    kind: Literal["infrastructure", "predicted"]
    explanation: str
    rule: str | None = None
    vectors: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class DispatchConfig(_Model):
    """ROCm runs: the workflow to dispatch, who may, and the budgets above which a
    maintainer approves."""

    workflow: str = ".github/workflows/rocm-targeted.yml"
    ref: str | None = None
    mode: Literal["targeted", "complement"] = "targeted"
    auto: Literal["trusted", "off"] = "trusted"
    cancel_stale: bool = True
    cancel_on_close: bool = True
    trusted_users: list[str] = field(default_factory=list)
    trusted_teams: list[str] = field(default_factory=list)
    maintainers: list[str] = field(default_factory=list)
    maintainer_teams: list[str] = field(default_factory=list)
    budget_gpu_minutes_per_head: float = 480.0
    budget_gpu_minutes_per_day: float = 4000.0
    allow_bots: bool = False
    allow_edited: bool = False
    # more `/word` prefixes rocmbot answers as its own (with the closest of its commands);
    # every other bot's command is left alone
    command_prefixes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ReenableConfig(_Model):
    """The re-enable sweep: how often the service tries the parked ROCm tests whose launch is
    valid on the default branch (off, daily, weekly), the GPU-minutes one sweep may spend, and
    whether it keeps the "Parked ROCm tests" issue."""

    sweep: Literal["off", "daily", "weekly"] = "off"
    budget_gpu_minutes: float = 600.0
    issue: bool = True


@dataclass(frozen=True, slots=True)
class RepoConfig(_Model):
    """The effective policy for one repository; built as is, the defaults."""

    markers: dict[str, Backend] = field(default_factory=lambda: {
        "register_cpu_ci": "cpu", "register_cuda_ci": "cuda", "register_rocm_ci": "rocm",
        "register_amd_ci": "rocm",
    })
    test_roots: list[str] = field(default_factory=lambda: ["tests", "test"])
    tests: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    python_roots: list[str] = field(default_factory=lambda: ["."])
    suites: dict[str, Suite] = field(default_factory=dict)
    harness: list[str] = field(default_factory=list)
    select_imports: bool = False
    select_fanout: list[str] = field(default_factory=list)
    select_nightly: bool = False
    select_external: bool = False
    environment: list[str] = field(default_factory=lambda: ["**/Dockerfile.rocm"])
    pins: PinsConfig = field(default_factory=PinsConfig)
    launch: LaunchConfig = field(default_factory=LaunchConfig)
    matrix_tests: MatrixTestsConfig = field(default_factory=MatrixTestsConfig)
    failures: list[FailureRule] = field(default_factory=list)
    dispatch: DispatchConfig = field(default_factory=DispatchConfig)
    reenable: ReenableConfig = field(default_factory=ReenableConfig)
    max_file_bytes: int = 1024 * 1024

    @classmethod
    def model_validate(cls, data: Any) -> RepoConfig:
        """``data`` validated (pydantic's ``ValidationError`` when it is not)."""
        return validate(data)

    def suite_gpus(self, suite: str) -> int | None:
        """GPUs of a suite's runner: the suite table first, then the name (`-4-gpu-`)."""
        entry = self.suites.get(suite)
        if entry is not None and entry.gpus is not None:
            return entry.gpus
        return _gpus_in_name(suite)


_GPU_IN_NAME = re.compile(r"-(\d{1,4})-gpu(?:-|$)")


@lru_cache(maxsize=1024)
def _gpus_in_name(suite: str) -> int | None:
    """The GPU count a suite's name gives (asked for every marker, of a few suites)."""
    found = _GPU_IN_NAME.search(suite)
    return int(found.group(1)) if found else None


def validate(data: Any) -> RepoConfig:
    """A whole configuration's data validated by :mod:`config.schema`, as the dataclasses
    (pydantic's ``ValidationError`` when it is not valid)."""
    from config.schema import RepoConfig as Schema

    return _from_model(Schema.model_validate(data))


def _from_model(model: schema.RepoConfig) -> RepoConfig:
    data = model.model_dump()
    pins = data["pins"]
    return RepoConfig(**{
        **data,
        "suites": {name: Suite(**suite) for name, suite in data["suites"].items()},
        "pins": PinsConfig(**{**pins, "groups": {
            name: PinGroupConfig(**group) for name, group in pins["groups"].items()
        }}),
        "launch": LaunchConfig(**data["launch"]),
        "matrix_tests": MatrixTestsConfig(**data["matrix_tests"]),
        "failures": [FailureRule(**rule) for rule in data["failures"]],
        "dispatch": DispatchConfig(**data["dispatch"]),
        "reenable": ReenableConfig(**data["reenable"]),
    })


DEFAULT_KEYS = tuple(f.name for f in dataclasses.fields(RepoConfig))


@cache
def default_data() -> dict[str, Any]:
    """The default configuration as plain data (what the packaged `defaults.yml` says)."""
    return defaults().model_dump()


def packaged_defaults() -> dict[str, Any]:
    """The packaged `defaults.yml`, read (the documented defaults, which a test compares
    with :func:`default_data`)."""
    from importlib import resources

    import yaml

    text = resources.files("config").joinpath("defaults.yml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def defaults() -> RepoConfig:
    """The default configuration: the dataclasses as they are, nothing to validate."""
    return RepoConfig()


@dataclass(frozen=True)
class ConfigProblem:
    """One validation problem, named by its dotted key."""

    key: str
    message: str
    line: int | None = None


@dataclass(frozen=True)
class LoadedConfig:
    config: RepoConfig
    path: str | None  # the file read, or None when the repository has none
    sources: dict[str, str]  # top-level key -> "default" or the file it came from
    problems: list[ConfigProblem] = field(default_factory=list)


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key; everything else in ``override`` replaces."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _key_lines(text: str) -> dict[str, int]:
    """The first line of each top-level key (`key:` at the start of a line), read in one pass:
    searching the text again for each of thousands of unknown keys would be quadratic."""
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        colon = line.find(":")
        for _ in range(8):  # a plain key may hold colons (`a:b: 1`): try the first few
            if colon <= 0:
                break
            lines.setdefault(line[:colon].rstrip(), number)
            colon = line.find(":", colon + 1)
    return lines


def parse_config(text: str, path: str = CONFIG_PATHS[0]) -> LoadedConfig:
    """Validate a configuration file's text; a failing key falls back to its default.

    Never raises: YAML errors, a top level that is not a mapping and invalid keys become
    problems, and the defaults stand in for what could not be used.
    """
    import yaml
    from pydantic import ValidationError

    from config import yamlload

    base = default_data()
    try:
        user = yamlload.safe_load(text)  # aliases bounded: no "billion laughs"
    except (yaml.YAMLError, RecursionError) as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        if isinstance(exc, yamlload.ExpansionError):
            message = f"refused: {exc.problem}"
        elif isinstance(exc, RecursionError):
            message = "not valid YAML: nested too deeply"
        else:
            reason = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
            message = f"not valid YAML: {reason}"
        return LoadedConfig(
            defaults(), path, dict.fromkeys(base, DEFAULT_SOURCE), [ConfigProblem("(file)", message, line)]
        )
    if user is None:
        user = {}
    if not isinstance(user, dict):
        return LoadedConfig(
            defaults(), path, dict.fromkeys(base, DEFAULT_SOURCE),
            [ConfigProblem("(file)", "the top level must be a mapping of keys", 1)],
        )
    problems: list[ConfigProblem] = []
    key_lines = _key_lines(text)
    user = {str(k): v for k, v in user.items()}
    for key in [k for k in user if k not in base]:
        hint = _closest(key, base) if len(problems) < MAX_HINTS else None  # difflib is slow
        problems.append(ConfigProblem(
            key, "unknown key" + (f"; did you mean `{hint}`?" if hint else ""), key_lines.get(key)
        ))
        del user[key]
    while True:
        try:
            config = validate(merge(base, user))
            break
        except ValidationError as exc:
            bad: set[str] = set()
            for error in exc.errors():
                loc = [str(part) for part in error["loc"]]
                top = loc[0] if loc else "(file)"
                problems.append(ConfigProblem(".".join(loc), error["msg"], key_lines.get(top)))
                bad.add(top)
            if not bad & user.keys():  # the defaults themselves are invalid: a bug, not input
                raise
            for key in bad:
                user.pop(key, None)
    sources = {key: (path if key in user else DEFAULT_SOURCE) for key in base}
    return LoadedConfig(config, path, sources, problems)


def _closest(key: str, known: dict[str, Any]) -> str | None:
    import difflib

    found = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


def validate_failures(data: Any) -> list[FailureRule]:
    """The patterns of a failures file (a list of mappings), validated by :mod:`config.schema`
    (pydantic's ``ValidationError`` when one is not valid)."""
    from pydantic import TypeAdapter

    from config.schema import FailureRule as Schema

    models = TypeAdapter(list[Schema]).validate_python(data)
    return [FailureRule(**m.model_dump()) for m in models]
