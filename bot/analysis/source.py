"""Reading and parsing a tree's files once each, with unreadable files turned into REG004."""

from __future__ import annotations

import ast
import logging
import re
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar, cast

from bot.analysis.findings import Finding, finding
from bot.analysis.tree import Tree

log = logging.getLogger(__name__)
T = TypeVar("T")


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Module:
    """A parsed Python file. Parsing is all that is ever done with it."""

    path: str
    text: str
    tree: ast.Module
    _lines: list[bytes] = field(default_factory=list, compare=False, repr=False)

    def _line(self, index: int) -> bytes:
        if not self._lines:  # split once: ast.get_source_segment splits the whole file each call
            starts = [0, *(m.end() for m in _LINE_BREAK.finditer(self.text))]
            ends = [*starts[1:], len(self.text)]
            self._lines.extend(self.text[a:b].encode("utf-8") for a, b in zip(starts, ends, strict=True))
        return self._lines[index] if 0 <= index < len(self._lines) else b""

    def source_segment(self, node: ast.AST) -> str | None:
        """The exact source text of a node, as :func:`ast.get_source_segment` gives it, from
        the lines split once (that function splits the whole file on every call)."""
        start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if start is None or end is None or col is None or end_col is None:
            return None
        if start == end:
            return self._line(start - 1)[col:end_col].decode()
        parts = [self._line(start - 1)[col:]]
        parts.extend(self._line(i) for i in range(start, end - 1))
        parts.append(self._line(end - 1)[:end_col])
        return b"".join(parts).decode()

    def segment(self, node: ast.AST) -> str:
        """The source text of a node, on one line (for messages)."""
        start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if start is None or end is None or col is None or end_col is None:
            text = ast.unparse(node)
        elif start == end:
            text = self._line(start - 1)[col:end_col].decode("utf-8", errors="replace")
        else:
            parts = [self._line(start - 1)[col:]]
            parts.extend(self._line(i) for i in range(start, end - 1))
            parts.append(self._line(end - 1)[:end_col])
            text = b"".join(parts).decode("utf-8", errors="replace")
        return " ".join(text.split())[:200]


@dataclass(frozen=True, slots=True)
class Unreadable:
    """Why a file could not be used; becomes REG004."""

    path: str
    line: int | None
    reason: str

    def finding(self) -> Finding:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return finding("REG004", self.path, self.line, f"{where}: {self.reason}")


class _ReadAhead:
    """Files fetched by a background thread, handed over as they arrive."""

    def __init__(self, stream: Callable[[list[str]], Iterable[tuple[str, bytes]]],
                 paths: list[str]) -> None:
        self._cond = threading.Condition()
        self._data: dict[str, bytes] = {}
        self._pending = set(paths)
        self._thread = threading.Thread(target=self._run, args=(stream, paths), daemon=True,
                                        name="rocmbot-read-ahead")
        self._thread.start()

    def _run(self, stream: Callable[[list[str]], Iterable[tuple[str, bytes]]],
             paths: list[str]) -> None:
        try:
            for path, data in stream(paths):
                with self._cond:
                    if path in self._pending:
                        self._data[path] = data
                    self._cond.notify_all()
        except Exception:  # the reader falls back to reading the file itself
            log.debug("read-ahead failed", exc_info=True)
        finally:
            with self._cond:
                self._pending.clear()
                self._cond.notify_all()

    def take(self, path: str) -> bytes | None:
        """The file's bytes once fetched; None if it is not (or no longer) being fetched."""
        with self._cond:
            while path in self._pending and path not in self._data:
                self._cond.wait()
            self._pending.discard(path)
            return self._data.pop(path, None)


class Shared:
    """What the snapshots of one analysis (a PR's base and head) share: files read and
    parsed, by path and content (git blob id). A file the change did not touch is then read,
    decoded and parsed once, whichever snapshot asks first. Only for trees of one git
    repository, whose blob ids cost nothing to look up."""

    def __init__(self) -> None:
        self.text: dict[tuple[str, str], str | Unreadable] = {}
        self.modules: dict[tuple[str, str], Module | Unreadable] = {}
        self.parsed: dict[tuple[Callable[[str, str], object], str, str], object] = {}


class Sources:
    """A tree's files as text and syntax trees, each read and parsed at most once (and once
    for the snapshots of an analysis, with ``shared``)."""

    def __init__(self, tree: Tree, max_bytes: int = 1 << 20, shared: Shared | None = None) -> None:
        self.tree = tree
        self.max_bytes = max_bytes
        self._text: dict[str, str | Unreadable | None] = {}
        self._modules: dict[str, Module | Unreadable | None] = {}
        self._parsed: dict[tuple[Callable[[str, str], object], str], object] = {}
        self._ahead: _ReadAhead | None = None
        self._shared = shared

    def exists(self, path: str) -> bool:
        return self.tree.blob_id(path) is not None

    def prefetch(self, paths: list[str]) -> None:
        """Start reading files ahead on a thread, where the tree can stream them (a git
        revision can): parsing one file then overlaps with fetching the next."""
        wanted = [p for p in paths if p not in self._text and (self.tree.size(p) or 0) <= self.max_bytes
                  and not self._known(p)]
        if not wanted:
            return
        fetch = getattr(self.tree, "fetch", None)
        if fetch is not None:  # a remote tree batches its reads itself
            fetch(wanted)
            return
        stream = getattr(self.tree, "stream", None)
        if stream is not None:
            self._ahead = _ReadAhead(stream, wanted)

    def hint(self, paths: list[str]) -> None:
        """Files that will likely be read soon: a remote tree fetches them in one request."""
        fetch = getattr(self.tree, "fetch", None)
        if fetch is not None:
            wanted = [p for p in paths if p not in self._text]
            if wanted:
                fetch(wanted)

    def _blob(self, path: str) -> tuple[str, str] | None:
        """The key of a file among what the snapshots share, if they share anything."""
        if self._shared is None:
            return None
        blob = self.tree.blob_id(path)
        return None if blob is None else (path, blob)

    def _known(self, path: str) -> bool:
        """Whether the other snapshot has read the file already."""
        key = self._blob(path)
        return key is not None and self._shared is not None and key in self._shared.text

    def text(self, path: str) -> str | Unreadable | None:
        """The file decoded as UTF-8, None when absent, or why it cannot be read."""
        if path not in self._text:
            key = self._blob(path)
            if key is not None and self._shared is not None:
                found = self._shared.text.get(key)
                if found is None:
                    found = self._read(path)
                    if found is not None:
                        self._shared.text[key] = found
                self._text[path] = found
            else:
                self._text[path] = self._read(path)
        return self._text[path]

    def _read(self, path: str) -> str | Unreadable | None:
        size = self.tree.size(path)
        if size is None:
            return None
        if size < 0:  # listed, but its content is not in the repository
            return Unreadable(path, None, "its content is missing from the repository "
                              "(a partial or damaged copy): it was not read")
        if size > self.max_bytes:
            return Unreadable(path, None, f"skipped: {size} bytes is over the {self.max_bytes}-byte limit")
        data = self._ahead.take(path) if self._ahead is not None else None
        if data is None:
            data = self.tree.read(path)
        if data is None:
            return None
        if b"\0" in data:
            return Unreadable(path, None, "skipped: binary content (a NUL byte)")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            return Unreadable(path, line, f"not UTF-8 text ({exc.reason} at byte {exc.start})")

    def module(self, path: str) -> Module | Unreadable | None:
        """The file parsed as Python, None when absent, or why it does not parse."""
        if path not in self._modules:
            key = self._blob(path)
            if key is not None and self._shared is not None:
                found = self._shared.modules.get(key)
                if found is None:
                    found = self._parse(path)
                    if found is not None:
                        self._shared.modules[key] = found
                self._modules[path] = found
            else:
                self._modules[path] = self._parse(path)
        return self._modules[path]

    def parsed(self, path: str, parse: Callable[[str, str], T]) -> T | Unreadable | None:
        """``parse(path, text)`` of the file, worked out once for every reader that asks
        (the pin groups and the CI index read the same workflows)."""
        key = (parse, path)
        if key not in self._parsed:
            blob = self._blob(path)
            common = None if blob is None else (parse, *blob)
            if common is not None and self._shared is not None and common in self._shared.parsed:
                self._parsed[key] = self._shared.parsed[common]
            else:
                text = self.text(path)
                self._parsed[key] = parse(path, text) if isinstance(text, str) else text
                if common is not None and self._shared is not None:
                    self._shared.parsed[common] = self._parsed[key]
        return cast("T | Unreadable | None", self._parsed[key])

    def release(self, path: str) -> None:
        """Drop a file's text and syntax tree once nothing needs them any more.

        Keeping a thousand syntax trees alive makes every garbage collection walk them all,
        which costs more than parsing them did; a test file is needed only while its own
        markers and launches are read, so it is released after that. Parsing it again
        later, if anything asks, gives the same result.
        """
        if isinstance(self._modules.get(path), Module):
            del self._modules[path]
            self._text.pop(path, None)
            key = self._blob(path)
            if key is not None and self._shared is not None:
                self._shared.modules.pop(key, None)
                self._shared.text.pop(key, None)

    def _parse(self, path: str) -> Module | Unreadable | None:
        text = self.text(path)
        if not isinstance(text, str):
            return text
        return parse_python(path, text)


# Warnings the parser gives about a repository's code (an odd escape, `1if x`) are not this
# program's business. The parser files them under the module named by the file name it was
# given, so every file is parsed under a name in a folder of its own, and one filter, set
# once, silences them all: no per-file `catch_warnings`, which costs time and changes the
# process-wide filters under other threads' feet.
_PARSED_AS = "<rocmbot-parse>/"
_QUIET = ("ignore", None, Warning, re.compile(re.escape(_PARSED_AS)), 0)


def parse_python(path: str, text: str) -> Module | Unreadable:
    """Parse Python source; never raises, whatever the text."""
    if _QUIET not in warnings.filters:  # set once; again if something reset the filters
        warnings.filterwarnings("ignore", module=re.escape(_PARSED_AS))
    try:
        tree = ast.parse(text, filename=_PARSED_AS + path)
    except SyntaxError as exc:
        detail = exc.msg or "invalid syntax"
        return Unreadable(path, exc.lineno, f"does not parse: {detail}")
    except (ValueError, RecursionError, MemoryError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc) or type(exc).__name__
        return Unreadable(path, None, f"does not parse: {reason}")
    return Module(path, text, tree)
