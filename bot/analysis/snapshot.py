"""One revision of a repository as the analysis sees it: files, parses, imports, markers."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Generic, TypeVar, cast

from bot.analysis.definitions import Definitions
from bot.analysis.findings import Finding
from bot.analysis.imports import ImportGraph
from bot.analysis.markers import Marker, find_markers
from bot.analysis.source import Module, Shared, Sources, Unreadable
from bot.analysis.tree import Tree, match
from config.repo import RepoConfig

T = TypeVar("T")

# a top-level call of a function named like a CI marker (`register_hcu_ci(...)`), for the
# notice that names the ones the configuration does not map to a backend
_MARKER_LIKE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?(register_[A-Za-z0-9_]*_ci)[ \t]*\(", re.MULTILINE)


class Derived(Generic[T]):
    """A kind of result worked out from a whole snapshot (the pin groups checked, the
    launch interpreters), kept by the snapshot itself: it lives exactly as long as the
    snapshot does, and no module-level cache can keep a revision's files alive.
    ``release``: what to do with the result when the snapshot's analysis ends (see
    :meth:`Snapshot.release`)."""

    __slots__ = ("make", "release")

    def __init__(self, make: Callable[[Snapshot], T],
                 release: Callable[[T], None] | None = None) -> None:
        self.make = make
        self.release = release


class Snapshot:
    """Caches everything derived from one tree, so each file is read and parsed once."""

    def __init__(self, tree: Tree, config: RepoConfig, shared: Shared | None = None) -> None:
        """``shared``: what another snapshot of the same repository already read and parsed
        (see :class:`~bot.analysis.source.Shared`)."""
        self.tree = tree
        self.config = config
        self.sources = Sources(tree, config.max_file_bytes, shared)
        self.graph = ImportGraph(self.sources, config.python_roots)
        self.definitions = Definitions(self.sources, config.python_roots)
        self._markers: dict[str, tuple[list[Marker], list[Finding]]] = {}
        self._test_paths: list[str] | None = None
        self._marker_call: re.Pattern[str] | None = None
        # marker-like calls of functions the configuration does not know: name -> files
        self.unknown_markers: dict[str, list[str]] = {}
        self._derived: dict[Derived[object], object] = {}

    def derived(self, kind: Derived[T]) -> T:
        """The result of ``kind`` for this snapshot, worked out on first use."""
        key = cast(Derived[object], kind)
        if key not in self._derived:
            self._derived[key] = kind.make(self)
        return cast(T, self._derived[key])

    def release(self) -> None:
        """Say the analysis of this snapshot is over: what was derived from it is released
        (each kind's ``release``: the launch interpreters are emptied), so that its values and
        syntax trees are freed now by reference counting rather than by the cycle collector."""
        derived, self._derived = self._derived, {}
        for kind, result in derived.items():
            if kind.release is not None:
                kind.release(result)
        self.definitions.release()

    def matrix_markers(self) -> dict[str, list[Marker]]:
        """The tests the workflows' job matrices list, by file (see
        :mod:`bot.analysis.ci.matrix`)."""
        if not self.config.matrix_tests.enabled:
            return {}
        from bot.analysis.ci import ci_index

        return ci_index(self).matrix.markers

    def is_test(self, path: str) -> bool:
        """Whether a path is a registered-test file: it matches the configured ``tests:``
        globs, or, without them, it is a Python file under a test root that calls a marker;
        or a job matrix lists it."""
        if any(match(g, path) for g in self.config.exclude):
            return False
        if path in self.matrix_markers():
            return True
        if self.config.tests:
            return any(match(g, path) for g in self.config.tests)
        return path.endswith(".py") and any(
            root == "." or path.startswith(f"{root}/") for root in self.config.test_roots
        ) and self._calls_marker(path)

    def test_paths(self) -> list[str]:
        """The registered-test files (see :meth:`is_test`), sorted."""
        if self._test_paths is None:
            if self.config.tests:
                found = self.matching(self.config.tests)
            else:
                found = self.matching([f"{r}/**/*.py" if r != "." else "**/*.py"
                                       for r in self.config.test_roots])
            if self.config.exclude:
                found = {p for p in found if not any(match(g, p) for g in self.config.exclude)}
            if not self.config.tests:
                self.sources.prefetch(sorted(found))
                self._look_for_unknown(sorted(found))
                found = {p for p in found if self._calls_marker(p)}
            listed = self.matrix_markers()
            found.update(p for p in listed if not any(match(g, p) for g in self.config.exclude))
            self._test_paths = sorted(found)
        return self._test_paths

    def _calls_marker(self, path: str) -> bool:
        """A cheap look at a file's text, before any parse: does a line start with a call of a
        marker function? A file that cannot be read counts (its REG004 is reported)."""
        text = self.sources.text(path)
        if text is None:
            return False
        if not isinstance(text, str):
            return True
        if self._marker_call is None:
            names = "|".join(re.escape(n) for n in sorted(self.config.markers, key=len, reverse=True))
            self._marker_call = re.compile(rf"^(?:[A-Za-z_][\w.]*\.)?(?:{names})[ \t]*\(", re.MULTILINE)
        return bool(self.config.markers) and self._marker_call.search(text) is not None

    def _look_for_unknown(self, paths: list[str]) -> None:
        """Note the marker-like calls of functions the configuration does not map."""
        for path in paths:
            text = self.sources.text(path)
            if not isinstance(text, str) or "_ci" not in text:
                continue
            for name in dict.fromkeys(_MARKER_LIKE.findall(text)):
                if name not in self.config.markers:
                    self.unknown_markers.setdefault(name, []).append(path)

    def limit_tests(self, paths: set[str]) -> None:
        """Consider only these test files (those of a change), without listing the others."""
        self._test_paths = sorted(p for p in paths if self.is_test(p) and self.tree.blob_id(p) is not None)
        if not self.config.tests:
            self._look_for_unknown(sorted(
                p for p in paths if p.endswith(".py") and self.tree.blob_id(p) is not None and any(
                    root == "." or p.startswith(f"{root}/") for root in self.config.test_roots)))

    def markers(self, path: str) -> tuple[list[Marker], list[Finding]]:
        """The markers of a test file and the findings reading them gave (REG002, REG004)."""
        if path not in self._markers:
            module = self.sources.module(path)
            if isinstance(module, Module):
                found, problems = find_markers(
                    module, self.config.markers, self.definitions.lookup(module))
            elif isinstance(module, Unreadable):
                found, problems = [], [module.finding()]
            else:
                found, problems = [], []
            listed = self.matrix_markers().get(path, [])
            self._markers[path] = ([*found, *listed], problems) if listed else (found, problems)
        return self._markers[path]

    def matching(self, patterns: list[str]) -> set[str]:
        out: set[str] = set()
        for pattern in patterns:
            out.update(self.tree.list(pattern))
        return out

    def workflows(self) -> list[str]:
        return sorted(self.matching([".github/workflows/*.yml", ".github/workflows/*.yaml"]))
