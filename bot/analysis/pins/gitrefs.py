"""Git URL dependencies across the Dockerfiles of every group (PIN006)."""

from __future__ import annotations

import re

from bot.analysis.findings import Severity, finding, rule
from bot.analysis.pins.files import Files
from bot.analysis.pins.places import PinGroup, Result
from bot.analysis.requirements import Spec


@rule("PIN006", "git-ref-drift", Severity.WARNING,
      "The same git URL dependency is installed at different refs in two Dockerfiles.")
class GitRefDrift:
    """
    ## What it does
    Compares git URL installs (`git+https://github.com/org/repo.git@ref`) across every
    Dockerfile of the repository, including Dockerfiles of different pin groups (the CUDA
    `Dockerfile` and `Dockerfile.rocm`), by repository URL and ref: one finding per URL. The
    message says what each ref is: a commit (hex), a tag (`v1.2.0`) or a branch (`@bridge`),
    and that a branch or tag moves.

    ## Why is this bad?
    The two images build different commits of the same dependency, so a fix verified on one
    platform is missing on the other.

    ## Example
    ```dockerfile
    # Dockerfile
    RUN pip install "git+https://github.com/org/lib.git@1111111"
    # Dockerfile.rocm
    RUN pip install "git+https://github.com/org/lib.git@2222222"
    ```
    Use instead: the same commit in both.
    """


def git_drift(files: Files, groups: list[PinGroup]) -> list[Result]:
    """One finding per git URL that Dockerfiles of different groups install at different refs,
    anchored at the first Dockerfile that differs from the first one installing it."""
    member: dict[str, set[str]] = {}
    for group in groups:
        for path in group.dockerfiles:
            member.setdefault(path, set()).add(group.name)
    by_url: dict[str, list[tuple[str, int, Spec]]] = {}
    for path in sorted(member):
        parsed = files.dockerfile(path)
        if parsed is None:
            continue
        for install in parsed.installs:
            for entry in install.entries:
                if entry.spec.kind == "git" and entry.spec.ref and entry.spec.url:
                    by_url.setdefault(entry.spec.url, []).append((path, entry.line, entry.spec))
    out: list[Result] = []
    for url, found in sorted(by_url.items()):
        ref_path, ref_line, ref_spec = found[0]
        differ = [
            (path, line, spec) for path, line, spec in found[1:]
            if path != ref_path and spec.ref != ref_spec.ref
            and not member.get(path, set()) & member.get(ref_path, set())  # PIN001 says it
        ]
        if not differ:
            continue
        where = "; ".join(f"{ref_kind(spec.ref)} in `{path}:{line}`"
                          for path, line, spec in differ)
        message = (
            f"`{url}` is installed at {ref_kind(ref_spec.ref)} in `{ref_path}:{ref_line}` "
            f"but at {where}."
        )
        branch = [p for p, _, s in [found[0], *differ] if not _commit(s.ref)]
        if branch:
            message += " A branch or tag moves: the images may build different code on " \
                       "different days even where the names agree; pin a commit."
        anchors = tuple((path, line, f"use `@{ref_spec.ref}` on line {line}, as `{ref_path}` "
                                     "does") for path, line, _ in differ)
        first = differ[0]
        result = finding("PIN006", first[0], first[1], message, fix=anchors[0][2])
        out.append(Result(result, frozenset({ref_path, *(p for p, _, _ in differ)}), None,
                           None, anchors))
    return out


def _commit(ref: str | None) -> bool:
    return ref is not None and re.fullmatch(r"[0-9a-f]{7,40}", ref) is not None


def ref_kind(ref: str | None) -> str:
    """A git ref as a message names it: `commit `abc1234``, `tag `v1.2``, `branch `main``."""
    if _commit(ref):
        return f"commit `{ref}`"
    if ref is not None and re.fullmatch(r"v?\d+(?:\.\d+)+\S*", ref):
        return f"tag `{ref}`"
    return f"branch `{ref}`"
