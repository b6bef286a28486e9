"""requirements.lock, the service's pinned and hashed runtime dependencies, agrees with
pyproject.toml: it pins every package `[project].dependencies` names, each within its range, with
hashes, and none of the test tools."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@dataclass(frozen=True)
class Pin:
    name: NormalizedName
    version: Version
    hashes: tuple[str, ...]


def parse_lock(text: str) -> list[Pin]:
    """The pins of a hashed requirements file: `name==version \\` lines, each with its hashes."""
    logical, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        current += " " + stripped.removesuffix("\\")
        if not stripped.endswith("\\"):
            logical.append(current.strip())
            current = ""
    assert current == "", f"the lock ends in a continued line: {current!r}"
    pins = []
    for entry in logical:
        requirement, *options = (part.strip() for part in entry.split(" --"))
        hashes = tuple(o.removeprefix("hash=") for o in options if o.startswith("hash="))
        assert len(hashes) == len(options), f"an option other than --hash: {entry!r}"
        parsed = Requirement(requirement)
        (spec,) = parsed.specifier  # exactly one specifier: `==`
        assert spec.operator == "==", f"not pinned with ==: {requirement!r}"
        pins.append(Pin(canonicalize_name(parsed.name), Version(spec.version), hashes))
    return pins


def locked() -> dict[NormalizedName, Pin]:
    pins = parse_lock(LOCK.read_text())
    by_name = {pin.name: pin for pin in pins}
    assert len(by_name) == len(pins), "the lock pins a package twice"
    return by_name


def test_a_hashed_lock_parses() -> None:
    text = ("# made by a tool\nalpha==1.2 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n"
            "    # via rocmbot (pyproject.toml)\nBeta_Pkg==2.0rc1 \\\n    --hash=sha256:cc\n")
    assert parse_lock(text) == [Pin(canonicalize_name("alpha"), Version("1.2"), ("sha256:aa", "sha256:bb")),
                                Pin(canonicalize_name("beta-pkg"), Version("2.0rc1"), ("sha256:cc",))]
    with pytest.raises(AssertionError, match="not pinned with =="):
        parse_lock("alpha>=1.2 \\\n    --hash=sha256:aa\n")


@pytest.mark.parametrize("dependency", PROJECT["dependencies"])
def test_the_lock_pins_each_runtime_dependency_within_its_range(dependency: str) -> None:
    wanted = Requirement(dependency)
    pin = locked().get(canonicalize_name(wanted.name))
    assert pin is not None, f"requirements.lock has no pin for {wanted.name} (CONTRIBUTING.md: refresh it)"
    assert wanted.specifier.contains(pin.version, prereleases=True), (
        f"requirements.lock pins {pin.name}=={pin.version}, outside pyproject.toml's {wanted} "
        "(CONTRIBUTING.md: refresh it)")


def test_every_pin_carries_its_hashes() -> None:
    """The image installs it with --require-hashes, which refuses a pin without one."""
    pins = locked()
    assert len(pins) >= len(PROJECT["dependencies"])
    unhashed = sorted(name for name, pin in pins.items() if not pin.hashes)
    assert unhashed == []
    assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for pin in pins.values() for h in pin.hashes)


def test_the_lock_holds_the_service_not_its_test_tools() -> None:
    runtime = {canonicalize_name(Requirement(d).name) for d in PROJECT["dependencies"]}
    tools = {canonicalize_name(Requirement(d).name) for d in PROJECT["optional-dependencies"]["test"]}
    assert sorted((tools - runtime - {canonicalize_name("rocmbot")}) & locked().keys()) == []


def test_contributing_gives_the_command_that_made_the_lock() -> None:
    (command,) = re.findall(r"^#\s+(uv pip compile .*)$", LOCK.read_text(), re.MULTILINE)
    assert command in (ROOT / "CONTRIBUTING.md").read_text()
