"""The per-repository configuration (`.github/rocmbot.yml`): model, defaults and loading."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from config import yamlload

CONFIG_PATHS = (".github/rocmbot.yml", ".github/rocmbot.yaml")
DEFAULT_SOURCE = "default"
MAX_HINTS = 100  # "did you mean" for the first unknown keys only

Backend = Literal["cpu", "cuda", "rocm"]


class Model(BaseModel):
    # defer_build: a model's validator is built when a configuration file is first
    # validated, not when the analysis imports this module (see `defaults`)
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


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


class PinsConfig(Model):
    """Dependency-pin checking: explicit groups (empty: inferred), ignored packages."""

    groups: dict[str, PinGroupConfig] = Field(default_factory=dict)
    ignore: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)


class LaunchConfig(Model):
    """Launch resolution and the PAR rules: defaults of flags a launch does not set, where
    the model script lives, and what platform a marker's backend means."""

    enabled: bool = True
    flavor: Literal["miles", "slime"] = "miles"
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
    servers: list[str] = Field(default_factory=lambda: ["popen_launch_server"])
    server_keywords: list[str] = Field(default_factory=lambda: ["Engine", "ServerArgs"])
    quiet_calls: list[str] = Field(default_factory=lambda: ["get_default_wandb_args"])
    max_steps: int = Field(default=200_000, ge=1_000, le=10_000_000)
    max_depth: int = Field(default=16, ge=1, le=64)


class DispatchConfig(Model):
    """ROCm runs: the workflow to dispatch, who may, and the budgets above which a
    maintainer approves."""

    workflow: str = ".github/workflows/rocm-targeted.yml"
    ref: str | None = None
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

    @field_validator("trusted_teams", "maintainer_teams")
    @classmethod
    def _teams(cls, value: list[str]) -> list[str]:
        for team in value:
            if team.count("/") != 1 or not all(team.split("/")):
                raise ValueError(f"{team!r}: name a team as org/team-slug")
        return value


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
    select_nightly: bool
    select_external: bool = False
    environment: list[str]
    pins: PinsConfig = Field(default_factory=PinsConfig)
    launch: LaunchConfig = Field(default_factory=LaunchConfig)
    dispatch: DispatchConfig = Field(default_factory=DispatchConfig)
    max_file_bytes: int = Field(ge=1024, le=64 * 1024 * 1024)

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


@cache
def default_data() -> dict[str, Any]:
    """The default configuration as plain data, read from the packaged `defaults.yml`."""
    text = resources.files("config").joinpath("defaults.yml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def defaults() -> RepoConfig:
    """The default configuration, built without validating it: the defaults are known to be
    valid (a test checks that validating them gives the same), and building the validators
    costs more than the rest of an analysis of a small change."""
    data = copy.deepcopy(default_data())
    pins = data["pins"]
    return RepoConfig.model_construct(**{
        **data,
        "suites": {name: Suite.model_construct(**suite) for name, suite in data["suites"].items()},
        "pins": PinsConfig.model_construct(**{**pins, "groups": {
            name: PinGroupConfig.model_construct(**group) for name, group in pins["groups"].items()
        }}),
        "launch": LaunchConfig.model_construct(**data["launch"]),
        "dispatch": DispatchConfig.model_construct(**data["dispatch"]),
    })


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
            config = RepoConfig.model_validate(merge(base, user))
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
