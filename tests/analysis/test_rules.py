"""The rule catalogue kept the ruff way: each rule declared once, in the module that emits it,
documented by the docstring of its declaration (What it does / Why is this bad? / Example),
and listed in the README as the catalogue has it. Since every declaration is catalogued,
`test_vectors.py` sees every rule when it checks that each has a good and a bad vector."""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import bot
from bot.analysis import engine  # noqa: F401  (it imports every module that declares rules)
from bot.analysis.findings import RULES, Rule

BOT = Path(bot.__file__).parent
README = BOT.parent / "README.md"
SECTIONS = ("## What it does", "## Why is this bad?", "## Example")
RULE_ID = re.compile(r"[A-Z]{3}\d{3}")
# Rules declared apart from the code that emits them: REG and CFG in `findings` (emitted by the
# engine, the marker reader, the source reader and the dispatch), PAR019 with the evaluation of
# the PAR rules (emitted for launches and servers, whose values it lists as not known).
DECLARED_APART = frozenset({"REG001", "REG002", "REG003", "REG004", "REG005", "CFG001", "CFG002", "PAR019"})


@dataclass
class Source:
    """Where rule ids are declared (`@rule("X")`, `@check("X")`) and used, module by module."""

    declared: dict[str, list[str]] = field(default_factory=dict)
    used: dict[str, set[str]] = field(default_factory=dict)


def _module(path: Path) -> str:
    parts = path.relative_to(BOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _scan() -> Source:
    source = Source()
    for path in sorted(BOT.rglob("*.py")):
        module = _module(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        declarations: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                for decorator in node.decorator_list:
                    if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name) \
                            and decorator.func.id in ("rule", "check", "check_servers") and decorator.args \
                            and isinstance(decorator.args[0], ast.Constant):
                        source.declared.setdefault(str(decorator.args[0].value), []).append(module)
                        declarations.add(id(decorator.args[0]))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and RULE_ID.fullmatch(node.value) and id(node) not in declarations:
                source.used.setdefault(node.value, set()).add(module)
    return source


SOURCE = _scan()


def _rules() -> list[Rule]:
    return [RULES[rule_id] for rule_id in sorted(RULES)]


def test_every_rule_is_declared_once_where_the_catalogue_says() -> None:
    assert {rule_id: m for rule_id, m in SOURCE.declared.items() if len(m) > 1} == {}
    assert {i: m[0] for i, m in SOURCE.declared.items()} == {r.id: r.module for r in _rules()}
    slugs = Counter(r.slug for r in _rules())
    assert [slug for slug, n in slugs.items() if n > 1] == []


@pytest.mark.parametrize("entry", _rules(), ids=lambda r: r.id)
def test_every_rule_is_emitted_from_the_module_that_declares_it(entry: Rule) -> None:
    emitters = SOURCE.used.get(entry.id, set())
    if entry.id in DECLARED_APART:
        assert emitters and entry.module not in emitters, (entry.id, emitters)
    elif entry.id.startswith("PAR"):
        # a PAR rule's id is written once, at its declaration: its findings (on launches and
        # on servers) take the id of the declaration that runs
        assert not emitters, f"{entry.id} is written outside its declaration, in {emitters}"
    else:
        assert entry.module in emitters, f"{entry.id} is declared in {entry.module}, emitted in {emitters}"


def test_every_par_rule_lives_in_the_par_package() -> None:
    outside = {r.id: r.module for r in _rules()
               if r.id.startswith("PAR") and not r.module.startswith("bot.analysis.par")}
    assert outside == {}


@pytest.mark.parametrize("entry", _rules(), ids=lambda r: r.id)
def test_every_rule_is_documented_in_ruffs_shape(entry: Rule) -> None:
    starts = [entry.doc.find(section) for section in SECTIONS]
    assert starts[0] == 0 and starts == sorted(starts), f"{entry.id}: sections missing or out of order"
    for start, end, section in zip(starts, [*starts[1:], len(entry.doc)], SECTIONS, strict=True):
        assert entry.doc[start + len(section):end].strip(), f"{entry.id}: `{section}` is empty"
    assert entry.summary.endswith(".") and "\n" not in entry.summary


def test_the_readme_lists_every_rule_with_its_slug_and_severity() -> None:
    rows = re.findall(r"^\| ([A-Z]{3}\d{3}) \| ([\w-]+) \| ([a-z /]+) \|", README.read_text(encoding="utf-8"),
                      re.MULTILINE)
    listed = {rule_id: (slug, severity.split(" / ")[0]) for rule_id, slug, severity in rows}
    assert listed == {r.id: (r.slug, r.severity.value) for r in _rules()}
    assert len(rows) == len(listed)
