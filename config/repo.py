"""The per-repository configuration (`.github/rocmbot.yml`): model, defaults and loading."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

CONFIG_PATHS = (".github/rocmbot.yml", ".github/rocmbot.yaml")
DEFAULT_SOURCE = "default"

Backend = Literal["cpu", "cuda", "rocm"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Suite(Model):
    """A CI suite: how many GPUs its runner has, and whether PR runs use it."""

    gpus: int | None = Field(default=None, ge=0, le=1024)
    per_pr: bool = True


class RepoConfig(Model):
    """The effective policy for one repository."""

    markers: dict[str, Backend]
    tests: list[str] = Field(min_length=1)
    exclude: list[str]
    python_roots: list[str] = Field(min_length=1)
    suites: dict[str, Suite]
    select_nightly: bool
    environment: list[str]
    max_file_bytes: int = Field(ge=1024, le=64 * 1024 * 1024)

    @field_validator("markers")
    @classmethod
    def _identifiers(cls, value: dict[str, Backend]) -> dict[str, Backend]:
        for name in value:
            if not name.isidentifier():
                raise ValueError(f"{name!r} is not a Python identifier")
        return value

    @field_validator("python_roots")
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
        found = _GPU_IN_NAME.search(suite)
        return int(found.group(1)) if found else None


_GPU_IN_NAME = re.compile(r"-(\d{1,4})-gpu(?:-|$)")


@cache
def default_data() -> dict[str, Any]:
    """The default configuration as plain data, read from the packaged `defaults.yml`."""
    text = resources.files("config").joinpath("defaults.yml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def defaults() -> RepoConfig:
    return RepoConfig.model_validate(default_data())


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


def _key_line(text: str, key: str) -> int | None:
    found = re.search(rf"^{re.escape(key)}\s*:", text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else None


def parse_config(text: str, path: str = CONFIG_PATHS[0]) -> LoadedConfig:
    """Validate a configuration file's text; a failing key falls back to its default.

    Never raises: YAML errors, a top level that is not a mapping and invalid keys become
    problems, and the defaults stand in for what could not be used.
    """
    base = default_data()
    try:
        user = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return LoadedConfig(
            defaults(), path, dict.fromkeys(base, DEFAULT_SOURCE),
            [ConfigProblem("(file)", f"not valid YAML: {reason}", line)],
        )
    if user is None:
        user = {}
    if not isinstance(user, dict):
        return LoadedConfig(
            defaults(), path, dict.fromkeys(base, DEFAULT_SOURCE),
            [ConfigProblem("(file)", "the top level must be a mapping of keys", 1)],
        )
    problems: list[ConfigProblem] = []
    user = {str(k): v for k, v in user.items()}
    for key in [k for k in user if k not in base]:
        hint = _closest(key, base)
        problems.append(ConfigProblem(
            key, "unknown key" + (f"; did you mean `{hint}`?" if hint else ""), _key_line(text, key)
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
                problems.append(ConfigProblem(".".join(loc), error["msg"], _key_line(text, top)))
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
