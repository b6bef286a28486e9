"""Every slash command rocmbot answers, declared once.

Each entry says how a command is written (its word, the word after it, whether test paths
follow, the options it takes), who may give it, what it does and how it is used. The parser
(:mod:`bot.rocm.commands`), the near-miss suggestions, the rights check of the command
handler, the `/run-amd help` reply and the README's table of commands are made from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["run", "all", "paths", "disabled", "retry", "cancel", "help", "approve", "unknown"]
# Who may give a command: anyone who can comment; those the repository trusts to run (write,
# maintain or admin permission, `dispatch.trusted_*` and the maintainers); its maintainers
# (maintain or admin permission, `dispatch.maintainer*`).
Rights = Literal["anyone", "write", "maintain"]
# Whether test paths follow the command's words: never, optionally, or at least one.
Paths = Literal["none", "optional", "required"]

WHO = {
    "anyone": "anyone",
    "write": "write, maintain or admin",
    "maintain": "maintain or admin",
}


@dataclass(frozen=True)
class Option:
    """A `--flag` a command may carry anywhere after its first word."""

    flag: str
    rights: Rights
    help: str
    denied: str  # the refusal's words for who may not use it: "`--force` may be used by"
    example: str


@dataclass(frozen=True)
class CommandSpec:
    """One command: how it is written, who may give it, what it does."""

    kind: Kind
    name: str  # the command's first word: `/run-amd`, `/approve-amd`
    word: str | None  # the word after it (`all`, `cancel`); None: none
    paths: Paths
    options: tuple[Option, ...]
    rights: Rights
    help: str
    denied: str  # the refusal's words for who may not give it: "ROCm runs may be started by"
    examples: tuple[str, ...]

    @property
    def usage(self) -> str:
        """How the command is written: `/run-amd disabled [<test path> ...]`."""
        parts = [self.name]
        if self.word is not None:
            parts.append(self.word)
        if self.paths == "required":
            parts.append("<test path> ...")
        elif self.paths == "optional":
            parts.append("[<test path> ...]")
        return " ".join(parts)

    @property
    def stem(self) -> str:
        """The command without its paths and options: what a near miss of it is offered."""
        return self.name if self.word is None else f"{self.name} {self.word}"

    def takes(self, count: int) -> bool:
        """Whether the command takes ``count`` test paths."""
        return {"none": count == 0, "optional": True, "required": count > 0}[self.paths]


FORCE = Option(
    "--force",
    "maintain",
    "run despite error findings: the held tests too, or a named parked test whose launch would fail",
    "`--force` may be used by",
    "/run-amd --force",
)

COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        "run", "/run-amd", None, "none", (FORCE,), "write",
        "run the ROCm tests this PR affects (its current selection)",
        "ROCm runs may be started by", ("/run-amd",),
    ),
    CommandSpec(
        "all", "/run-amd", "all", "none", (FORCE,), "write",
        "run every enabled ROCm test of the per-PR suites",
        "ROCm runs may be started by", ("/run-amd all",),
    ),
    CommandSpec(
        "paths", "/run-amd", None, "required", (FORCE,), "write",
        "run those tests: enabled ROCm tests of the head, whatever their suite's cadence",
        "ROCm runs may be started by", ("/run-amd tests/e2e/megatron/test_qwen35_moe.py",),
    ),
    CommandSpec(
        "disabled", "/run-amd", "disabled", "optional", (FORCE,), "write",
        "run this PR's parked (disabled) ROCm tests that can come back (launch checked and valid, "
        "reached by the PR); with paths, the named parked ROCm tests of the head",
        "ROCm runs may be started by",
        ("/run-amd disabled", "/run-amd disabled tests/e2e/megatron/test_qwen35_moe.py"),
    ),
    CommandSpec(
        "retry", "/run-amd", "retry", "none", (FORCE,), "write",
        "run again the ROCm tests whose last run on the current head failed (as they were sent: "
        "a parked test as parked)",
        "ROCm runs may be started by", ("/run-amd retry",),
    ),
    CommandSpec(
        "cancel", "/run-amd", "cancel", "none", (), "write",
        "cancel this PR's ROCm runs in flight",
        "runs may be cancelled by", ("/run-amd cancel",),
    ),
    CommandSpec(
        "approve", "/approve-amd", None, "none", (), "maintain",
        "approve the waiting ROCm runs of the current head",
        "ROCm runs may be approved by", ("/approve-amd",),
    ),
    CommandSpec(
        "help", "/run-amd", "help", "none", (), "anyone",
        "list these commands, and the ROCm tests selected for the head",
        "", ("/run-amd help",),
    ),
)

NAMES: tuple[str, ...] = tuple(dict.fromkeys(c.name for c in COMMANDS))  # the words rocmbot owns


def spec(kind: Kind) -> CommandSpec:
    """The entry of a command kind (not `unknown`)."""
    for c in COMMANDS:
        if c.kind == kind:
            return c
    raise KeyError(kind)


def options() -> tuple[Option, ...]:
    """Every option, once, in the order the table first names it."""
    return tuple(dict.fromkeys(o for c in COMMANDS for o in c.options))


def _users(option: Option) -> list[CommandSpec]:
    return [c for c in COMMANDS if option in c.options]


def help_lines() -> list[str]:
    """The commands as `/run-amd help` lists them; an option follows the last command taking it."""
    lines = []
    for c in COMMANDS:
        note = " (maintainers)" if c.rights == "maintain" else ""
        lines.append(f"- `{c.usage}`: {c.help}{note}")
        for o in options():
            if _users(o)[-1] is c:
                note = " (maintainers)" if o.rights == "maintain" else ""
                lines.append(f"- `{c.name} {o.flag}`: {o.help}{note}")
    return lines


def _either(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table() -> str:
    """The README's table of commands (between its `commands:start` and `commands:end` markers)."""
    rows = ["| Command | What it does | Who may | Example |", "| --- | --- | --- | --- |"]
    for c in COMMANDS:
        example = ", ".join(f"`{e}`" for e in c.examples)
        rows.append(f"| `{_cell(c.usage)}` | {_cell(c.help)} | {WHO[c.rights]} | {_cell(example)} |")
    for o in options():
        after = _either([f"`{c.stem}`" if c.paths != "required" else "test paths" for c in _users(o)])
        rows.append(f"| `{o.flag}` (after {after}) | {_cell(o.help)} | {WHO[o.rights]} | `{o.example}` |")
    return "\n".join(rows) + "\n"
