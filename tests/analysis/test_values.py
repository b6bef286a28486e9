"""Values of the partial evaluator: keys, truthiness, equality, merging and copying."""

from __future__ import annotations

from bot.analysis.values import (
    Choice,
    Chunk,
    ClassV,
    Const,
    DictV,
    FieldSpec,
    Hole,
    Instance,
    ListV,
    Origin,
    SetV,
    Text,
    TupleV,
    Unknown,
    clone,
    equal,
    from_python,
    key_of,
    merge,
    truth,
)

ORIGIN = Origin("t.py", 1)


def _text(*parts: str) -> Text:
    """A text whose parts starting with ``?`` are holes."""
    return Text(tuple(Hole(p[1:], ORIGIN) if p.startswith("?") else Chunk(p, ORIGIN) for p in parts))


def test_dataclass_fields_come_only_from_dataclasses_in_the_mro_and_later_ones_win() -> None:
    base = ClassV("Base", "t.py", {}, (), dataclass=True,
                  fields=[FieldSpec("tp", Const(1), None), FieldSpec("pp", Const(1), None)])
    mixin = ClassV("Mixin", "t.py", {}, (), fields=[FieldSpec("ignored", None, None)])
    child = ClassV("Child", "t.py", {}, (mixin, base), dataclass=True,
                   fields=[FieldSpec("tp", Const(8), None), FieldSpec("ep", None, None)])
    fields = child.all_fields()
    assert [f.name for f in fields] == ["tp", "pp", "ep"]
    assert fields[0].default == Const(8)


def test_a_tuple_is_a_key_only_when_every_item_is_known() -> None:
    known = TupleV((Const(1), Text.of("a")))
    assert key_of(known) == ("t", (("c", 1), ("s", "a")))
    assert key_of(TupleV((Const(1), _text("?x")))) is None


def test_plain_lists_become_list_values_and_other_objects_unknown() -> None:
    listed = from_python([1, "a"], ORIGIN)
    assert isinstance(listed, ListV)
    assert listed.items == [Const(1), Text.of("a")]
    other = from_python({"k": 1}, ORIGIN)
    assert isinstance(other, Unknown)
    assert other.text == "{'k': 1}" and other.origin == ORIGIN


def test_a_text_with_holes_is_true_only_when_some_known_part_is_not_empty() -> None:
    assert truth(_text("--tp ", "?n")) is True
    assert truth(_text("?n")) is None


def test_dict_truth_is_undecided_only_when_empty_and_incomplete() -> None:
    assert truth(DictV({("s", "a"): (Text.of("a"), Const(1))})) is True
    assert truth(DictV({})) is False
    assert truth(DictV({}, complete=False)) is None


def test_set_truth_is_whether_it_has_members() -> None:
    assert truth(SetV({})) is False
    assert truth(SetV({("c", 1): Const(1)})) is True


def test_sequences_with_unknown_items_compare_by_kind_length_and_items() -> None:
    hole = _text("?x")
    assert equal(ListV([hole]), TupleV((hole,))) is False
    assert equal(ListV([hole]), ListV([hole, Const(1)])) is False
    assert equal(ListV([hole, Const(1)]), ListV([_text("?y"), Const(2)])) is False
    assert equal(ListV([hole, Const(1)]), ListV([_text("?y"), Const(1)])) is None


def test_dataclass_instances_with_different_fields_set_are_undecided() -> None:
    cls = ClassV("Cfg", "t.py", {}, (), dataclass=True)
    assert equal(Instance(cls, {"tp": Const(1)}), Instance(cls, {"tp": Const(1), "pp": Const(2)})) is None


def test_merged_texts_keep_their_common_prefix_and_suffix_outside_the_choice() -> None:
    a = _text("--tp ", "2", " --pp 1")
    b = _text("--tp ", "4", " --pp 1")
    merged = merge(a, b, "FAST", ORIGIN)
    assert isinstance(merged, Text)
    assert merged.parts[0] == Chunk("--tp ")
    assert merged.parts[2] == Chunk(" --pp 1")
    assert merged.parts[1] == Choice(((Chunk("2"),), (Chunk("4"),)), "FAST")


def test_merging_equal_texts_needs_no_choice() -> None:
    a = _text("--tp ", "2")
    assert merge(a, _text("--tp ", "2"), "FAST", ORIGIN) is a


def test_clone_keeps_shared_values_shared_and_copies_sets() -> None:
    shared = ListV([Const(1)])
    members = SetV({("c", 1): Const(1)})
    copied = clone(ListV([shared, shared, members]), {})
    assert isinstance(copied, ListV)
    first, second, copied_set = copied.items
    assert first is second and first is not shared
    assert isinstance(copied_set, SetV) and copied_set is not members
    copied_set.items[("c", 2)] = Const(2)
    assert list(members.items) == [("c", 1)]
