"""The cycle collector is paused while analyses run and left as it was found afterwards."""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.analysis import engine
from bot.analysis.evaluate.core import ModuleState, Scope
from bot.analysis.gcpause import COLLECT_EVERY, paused
from bot.analysis.source import Module
from bot.analysis.tree import FolderTree
from bot.cli.example import BASE_FILES
from config.repo import LoadedConfig


@pytest.fixture(autouse=True)
def _restore_collector() -> Iterator[None]:
    restore = gc.enable if gc.isenabled() else gc.disable
    yield
    restore()


def test_a_pause_resumes_the_collector_when_it_ends() -> None:
    gc.enable()
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_pauses_resume_only_when_the_outermost_ends() -> None:
    gc.enable()
    with paused():
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_ended_by_an_exception_resumes_the_collector() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_analyses_that_overlap_without_a_break_still_collect(monkeypatch: pytest.MonkeyPatch) -> None:
    gc.enable()
    collections: list[int] = []

    def collect() -> int:
        collections.append(1)
        return 0

    monkeypatch.setattr(gc, "collect", collect)
    with paused():  # a long analysis, while many short ones come and go
        for _ in range(COLLECT_EVERY * 2):
            with paused():
                pass
        assert not gc.isenabled()
    assert len(collections) == 2 and gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def _write(root: Path) -> FolderTree:
    for path, text in BASE_FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return FolderTree(root)


def test_audit_and_analyze_run_with_the_collector_paused(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _write(tmp_path)
    seen: list[bool] = []
    real = engine.read_config

    def spying(t: FolderTree) -> LoadedConfig:
        seen.append(gc.isenabled())
        return real(t)

    monkeypatch.setattr(engine, "read_config", spying)
    gc.enable()
    engine.audit(tree)
    engine.analyze(tree, tree)
    assert seen == [False, False] and gc.isenabled()


def test_an_analysis_that_fails_resumes_the_collector(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    tree = _write(tmp_path)

    def failing(t: FolderTree) -> LoadedConfig:
        raise OSError("unreadable")

    monkeypatch.setattr(engine, "read_config", failing)
    gc.enable()
    with pytest.raises(OSError):
        engine.audit(tree)
    assert gc.isenabled()


def test_audit_and_analyze_leave_no_syntax_tree_to_the_collector(tmp_path: Path) -> None:
    """What an analysis made is freed by reference counting when it ends: the collector,
    resuming, has no revision's trees, modules or evaluator state to walk (on a real
    repository that walk cost a seventh of the audit)."""
    tree = _write(tmp_path)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        engine.audit(tree)
        engine.analyze(tree, tree)
        gc.collect()
        ours = [o for o in gc.garbage if isinstance(o, ast.AST | Module | ModuleState | Scope)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert ours == []
