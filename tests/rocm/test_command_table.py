"""The command table: the parser, the help, the near misses, the rights and the README's table
all come from it, and agree with it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from bot.rocm import payloads
from bot.rocm.command_table import COMMANDS, FORCE, CommandSpec, Kind, markdown_table, options, spec
from bot.rocm.commands import VALID, parse, slip_of_word
from bot.rocm.decide import Actor, may_command, named_tests
from config.repo import DispatchConfig

README = Path(__file__).resolve().parents[2] / "README.md"
BETWEEN = re.compile(r"<!-- commands:start -->\n(.*?)<!-- commands:end -->", re.DOTALL)

OUTSIDER = Actor("outsider", "read", False, False)
DEV = Actor("dev", "write", True, False)
LEAD = Actor("lead", "maintain", True, True)


def test_the_readme_holds_the_table_the_code_renders() -> None:
    found = BETWEEN.findall(README.read_text(encoding="utf-8"))
    assert len(found) == 1, "README.md needs one <!-- commands:start --> ... <!-- commands:end --> block"
    assert found[0] == markdown_table(), "README.md's command table is stale: paste markdown_table()"


def test_the_table_has_a_row_per_command_and_option() -> None:
    rows = [r for r in markdown_table().splitlines() if r.startswith("| `")]
    assert len(rows) == len(COMMANDS) + len(options())
    for entry in COMMANDS:
        assert any(r.startswith(f"| `{entry.usage}` |") for r in rows), entry.usage
    assert any(r.startswith("| `--force` (after `/run-amd`, `/run-amd all`") for r in rows)


def test_every_kind_but_unknown_has_one_entry() -> None:
    kinds = [c.kind for c in COMMANDS]
    assert sorted(kinds) == sorted(set(kinds)) == sorted(k for k in get_args(Kind) if k != "unknown")
    with pytest.raises(KeyError):
        spec("unknown")


@pytest.mark.parametrize("entry", COMMANDS, ids=lambda c: c.kind)
def test_each_example_parses_as_its_command(entry: CommandSpec) -> None:
    for example in entry.examples:
        command = parse(example)
        assert command is not None and command.kind == entry.kind, example


def test_each_option_example_parses_with_the_option() -> None:
    command = parse(FORCE.example)
    assert command is not None and command.kind == "run" and command.force


@pytest.mark.parametrize("entry", COMMANDS, ids=lambda c: c.kind)
def test_help_lists_every_command(entry: CommandSpec) -> None:
    usage = entry.usage
    assert f"- `{usage}`: " in payloads.HELP
    assert usage in VALID


@pytest.mark.parametrize("entry", [c for c in COMMANDS if c.word is not None], ids=lambda c: c.kind)
def test_a_slip_of_a_commands_words_suggests_it(entry: CommandSpec) -> None:
    name, word = entry.name, entry.word or ""
    slip = name.replace("-", "", 1)  # `/runamd`
    command = parse(f"{slip} {word[:-1]}")
    assert command is not None and command.kind == "unknown" and command.suggestion == f"{name} {word}"


@pytest.mark.parametrize("entry", [c for c in COMMANDS if c.options != (FORCE,)], ids=lambda c: c.kind)
def test_an_option_a_command_does_not_take_is_a_near_miss_of_the_command(entry: CommandSpec) -> None:
    command = parse(f"{entry.stem} --force")
    assert command is not None and command.kind == "unknown"
    assert command.suggestion == entry.stem


@pytest.mark.parametrize("entry", COMMANDS, ids=lambda c: c.kind)
def test_the_rights_the_table_declares_are_the_ones_checked(entry: CommandSpec) -> None:
    rights = entry.rights
    config = DispatchConfig()
    expected = {"anyone": (True, True, True), "write": (False, True, True), "maintain": (False, False, True)}
    got = tuple(may_command(who, entry, [], config) is None for who in (OUTSIDER, DEV, LEAD))
    assert got == expected[rights]
    refused = may_command(OUTSIDER, entry, [], config)
    if refused is not None:
        assert refused.reason.startswith("@outsider has `read` permission; " + entry.denied)
    if FORCE in entry.options:
        forced = may_command(DEV, entry, ["--force"], config)
        assert forced is not None and "`--force` may be used by people with maintain" in forced.reason
        assert may_command(LEAD, entry, ["--force"], config) is None


@pytest.mark.parametrize("entry", [c for c in COMMANDS if c.word is not None], ids=lambda c: c.kind)
def test_a_path_that_is_a_slip_of_a_commands_word_is_offered_the_command(entry: CommandSpec) -> None:
    word = entry.word or ""
    slip = word[1] + word[0] + word[2:]  # two letters swapped
    assert slip_of_word(slip) == entry.stem
    tests, problems = named_tests([slip], {}, set())
    assert tests == [] and problems == [f"`{slip}` is not a file at the head (did you mean `{entry.stem}`?)"]
    assert slip_of_word("tests/e2e/test_x.py") is None and slip_of_word("al") is None
