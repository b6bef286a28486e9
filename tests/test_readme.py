"""The README and CONTRIBUTING.md stay true: their JSON examples parse, the files of this
repository they cite exist, and the benches they tell you to run are there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "CONTRIBUTING.md")

# Folders of rocmbot itself. Paths under `tests/`, `scripts/`, `docker/`, ... are as often the
# analysed repositories' (miles' `tests/ci/ci_register.py`) as ours, so they are not checked.
OWN_FOLDERS = ("bot", "handlers", "config", "bench", "bin", "docs", ".ci")
OWN_FILES = ("README.md", "CONTRIBUTING.md", ".pre-commit-hooks.yaml", "pyproject.toml", "requirements.lock")
PLACEHOLDER = re.compile(r"[<>{}*]|\.\.\.")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
JSON_BLOCK = re.compile(r"^```json\n(.*?)^```$", re.DOTALL | re.MULTILINE)
BENCH = re.compile(r"-m (bench\.[a-z_]+)")


def _text(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def _is_own(word: str) -> bool:
    if word in OWN_FILES:
        return True
    if word.startswith(".github/workflows/rocmbot"):
        return True
    first, slash, _ = word.partition("/")
    return bool(slash) and first in OWN_FOLDERS


def cited_paths(text: str) -> set[str]:
    """The repository paths a document cites: in code spans (word by word) and link targets."""
    words = [w for span in CODE_SPAN.findall(text) for w in span.split()]
    words += [target for target in LINK.findall(text) if "://" not in target]
    paths = set()
    for raw in words:
        word = raw.strip("\"'(),;:").split("#")[0]
        if word and not PLACEHOLDER.search(word) and _is_own(word):
            paths.add(word)
    return paths


def test_cited_paths_are_found_in_a_sample() -> None:
    text = ("see `sh docs/screenshots/make.sh` and [x](docs/security.md), not miles' "
            "`tests/ci/ci_register.py`, `scripts/models/{MODEL_TYPE}.py` or `tests/vectors/<ID>/`; "
            "`.github/workflows/rocm-targeted.yml` is the target's, `bin/run audit --repo .` ours")
    assert cited_paths(text) == {"docs/screenshots/make.sh", "docs/security.md", "bin/run"}


@pytest.mark.parametrize("name", DOCS)
def test_every_cited_file_exists(name: str) -> None:
    paths = cited_paths(_text(name))
    assert len(paths) >= 5, f"{name} cites almost nothing of this repository: {sorted(paths)}"
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == [], f"{name} cites files that do not exist: {missing}"


@pytest.mark.parametrize("name", DOCS)
def test_every_bench_it_names_exists(name: str) -> None:
    missing = sorted(m for m in set(BENCH.findall(_text(name)))
                     if not (ROOT / (m.replace(".", "/") + ".py")).is_file())
    assert missing == [], f"{name} names benches that do not exist: {missing}"


def test_readme_json_examples_parse() -> None:
    blocks = JSON_BLOCK.findall(_text("README.md"))
    assert blocks, "the README has no JSON example"
    for block in blocks:
        document = json.loads(block)  # raises with the line and column of what is not JSON
        assert isinstance(document, dict)


def test_readme_json_example_has_the_documented_fields() -> None:
    (example,) = [json.loads(b) for b in JSON_BLOCK.findall(_text("README.md")) if '"schema"' in b]
    assert {"schema", "base", "head", "tests", "selected", "findings"} <= set(example)
    assert {"launch", "cadence", "change", "reasons"} <= set(example["tests"][0])
    assert {"rule", "severity", "fix", "test", "baseline"} <= set(example["findings"][0])
