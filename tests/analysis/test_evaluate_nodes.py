"""What the evaluator keeps on syntax tree nodes: kept once, in one module, never mistaken."""

from __future__ import annotations

import ast
from pathlib import Path

from bot.analysis import evaluate
from bot.analysis.evaluate.core import PENDING, Pending
from bot.analysis.evaluate.nodes import constant, keep_constant, node_origin, source_text
from bot.analysis.source import Module, parse_python
from bot.analysis.values import Const, Unknown, Value, python

PACKAGE = Path(evaluate.__file__).parent


def _writes_to_nodes(path: Path) -> list[str]:
    """The places in ``path`` that set an attribute by name or through ``__dict__``."""
    def writes(node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return isinstance(node.func, ast.Name) and node.func.id == "setattr"
        return isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and \
            isinstance(node.value, ast.Attribute) and node.value.attr == "__dict__"

    return [f"{path.name}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text()))
            if writes(node) and isinstance(node, ast.expr)]


def test_only_the_nodes_module_sets_attributes_on_syntax_tree_nodes() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) > 5
    assert _writes_to_nodes(PACKAGE / "nodes.py")
    assert [place for path in modules if path.name != "nodes.py"
            for place in _writes_to_nodes(path)] == []
    assert [path.name for path in modules if "_rocmbot_" in path.read_text()] == ["nodes.py"]


def test_no_module_of_the_evaluator_is_over_six_hundred_lines() -> None:
    assert {path.name: n for path in PACKAGE.glob("*.py")
            if (n := len(path.read_text().splitlines())) > 600} == {}


def _module(text: str) -> Module:
    module = parse_python("main.py", text)
    assert isinstance(module, Module)
    return module


def test_a_nodes_text_and_origin_are_worked_out_once() -> None:
    module = _module("X = call(a, b)\n")
    node = module.tree.body[0]
    assert isinstance(node, ast.Assign)
    scope = evaluate.Scope({}, None, evaluate.ModuleState("main.py", "__main__", module))
    interp = evaluate.Interpreter(lambda p: None, lambda p: False)
    text = source_text(interp, node.value, scope)
    assert text == "call(a, b)"
    assert source_text(interp, node.value, scope) is text
    origin = node_origin(node.value, scope)
    assert (origin.path, origin.line) == ("main.py", 1)
    assert node_origin(node.value, scope) is origin


def test_a_constants_value_is_made_once_and_kept_on_its_node() -> None:
    module = _module("X = 3\n")
    node = module.tree.body[0]
    assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
    scope = evaluate.Scope({}, None, evaluate.ModuleState("main.py", "__main__", module))
    made: list[ast.Constant] = []

    class Maker:
        def _e_constant(self, node: ast.Constant, scope: evaluate.Scope) -> Value:
            made.append(node)
            return keep_constant(node, Const(3))

    first = constant(Maker(), node.value, scope)
    assert constant(Maker(), node.value, scope) is first
    assert made == [node.value]


def test_a_literal_set_by_name_is_the_same_value_in_every_run() -> None:
    module = _module("X = 3\n")
    interp = evaluate.Interpreter(lambda p: module if p == "main.py" else None,
                                  lambda p: p == "main.py")
    interp.run("main.py")
    first = interp.module_globals("__main__")["X"]
    interp.run("main.py")
    assert interp.module_globals("__main__")["X"] is first
    assert python(first) == 3


def test_the_pending_text_is_one_object_never_shown() -> None:
    assert PENDING is Pending.TEXT
    assert isinstance(PENDING, str)
    source = "import os\nR = cfg.size\nS = cfg['k']\nT = os.nothing.deeper\nU = f'--x {cfg.n}'\n"
    interp = evaluate.Interpreter(lambda p: _module(source), lambda p: p == "main.py")
    interp.run("main.py")
    variables = interp.module_globals("__main__")
    texts = [value.text for name in "RST" if isinstance(value := variables[name], Unknown)]
    assert texts == ["cfg.size", "cfg['k']", "os.nothing.deeper"]
    assert "cfg.n" in repr(variables["U"])
    assert str(PENDING) not in repr(variables)
