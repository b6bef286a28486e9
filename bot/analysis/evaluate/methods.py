"""The modelled methods of strings, lists, tuples, dicts, sets and regular expression
matches."""

from __future__ import annotations

from bot.analysis.evaluate.core import MAX_ITEMS, MAX_TEXT, Many, counted, iterate, reaches, text_of
from bot.analysis.evaluate.modelled import BuiltinCall, plain_args
from bot.analysis.values import (
    Choice,
    Chunk,
    Const,
    DictV,
    Hole,
    ListV,
    MatchV,
    Part,
    SetV,
    Text,
    TupleV,
    Unknown,
    Value,
    equal,
    from_python,
    key_of,
    origin_of,
    python,
)


def b_match(call: BuiltinCall) -> Value:
    match = call.func.bound
    assert isinstance(match, MatchV)
    method = call.func.name.split(".")[1]
    if method == "groups":
        return TupleV(match.groups[1:])
    if method == "groupdict":
        out = DictV({})
        for name, number in match.names.items():
            out.items[("s", name)] = (Text.of(name), match.groups[number])
        return out
    picked: list[Value] = []
    for arg in call.args or [Const(0)]:
        key = python(arg)
        index = match.names.get(key) if isinstance(key, str) else key
        if not isinstance(index, int) or isinstance(index, bool) or \
                not 0 <= index < len(match.groups):
            return call.unknown()
        picked.append(match.groups[index])
    return picked[0] if len(picked) == 1 else TupleV(tuple(picked))


def _join(separator: Text, items: list[Value], call: BuiltinCall) -> Value:
    parts: list[Part] = []
    for index, item in enumerate(items):
        if index and separator.parts:
            parts.extend(separator.parts)
        if isinstance(item, Text):
            parts.extend(item.parts)
        elif isinstance(item, Unknown):
            parts.append(Hole(item.text, item.origin or call.origin, item.quiet))
        else:
            return call.unknown()
    if sum(len(p.text) for p in parts if not isinstance(p, Choice)) > MAX_TEXT:
        return call.unknown()
    return Text(tuple(parts))


def b_str_method(call: BuiltinCall) -> Value:
    text = call.func.bound
    assert isinstance(text, Text)
    method = call.func.name.split(".")[1]
    if method == "join":
        items = iterate(call.args[0])
        if items is None:
            return call.unknown()
        return _join(text, items, call)
    if method == "format":
        return _str_format(text, call)
    if method in ("strip", "lstrip", "rstrip") and not call.args:
        return _strip(text, method)
    plain = text.plain
    args = plain_args(call)
    if plain is None or args is None:
        return call.unknown()
    origin = origin_of(text)
    if method == "split" and not call.keywords:
        pieces = plain.split(*args) if args and args[0] is not None else plain.split()  # type: ignore[arg-type]
        found: list[Value] = [Text.of(p, origin) for p in pieces[:MAX_ITEMS]]
        return ListV(found)
    result = getattr(plain, method)(*args)
    if isinstance(result, str) and len(result) > MAX_TEXT:
        return call.unknown()
    return from_python(result, origin)


def _strip(text: Text, method: str) -> Value:
    parts = list(text.parts)
    if method in ("strip", "lstrip"):
        while parts and isinstance(parts[0], Chunk) and not parts[0].text.strip():
            parts.pop(0)
        if parts and isinstance(parts[0], Chunk):
            parts[0] = Chunk(parts[0].text.lstrip(), parts[0].origin)
    if method in ("strip", "rstrip"):
        while parts and isinstance(parts[-1], Chunk) and not parts[-1].text.strip():
            parts.pop()
        if parts and isinstance(parts[-1], Chunk):
            parts[-1] = Chunk(parts[-1].text.rstrip(), parts[-1].origin)
    return Text(tuple(parts))


def _str_format(template: Text, call: BuiltinCall) -> Value:
    import string

    plain = template.plain
    if plain is None:
        return call.unknown()
    parts: list[Part] = []
    auto = 0
    origin = origin_of(template)
    try:
        parsed = list(string.Formatter().parse(plain))
    except ValueError:
        return call.unknown()
    for literal, name, spec, conversion in parsed:
        if literal:
            parts.append(Chunk(literal, origin))
        if name is None:
            continue
        head, _, rest = name.partition(".")
        value: Value
        if head == "":
            if auto >= len(call.args):
                return call.unknown()
            value = call.args[auto]
            auto += 1
        elif head.isdigit():
            if int(head) >= len(call.args):
                return call.unknown()
            value = call.args[int(head)]
        elif head in call.keywords:
            value = call.keywords[head]
        else:
            return call.unknown()
        for attr in rest.split(".") if rest else []:
            value = call.interp._getattr(value, attr, call.text, call.origin)
        conv = ord(conversion) if conversion else -1
        parts.extend(call.interp._format(value, conv, spec or "", call.node, call.scope,
                                         call.origin.line))
    return Text(tuple(parts))


_LIST_CHANGES = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort",
                           "reverse"})


def b_list_method(call: BuiltinCall) -> Value:
    target = call.func.bound
    method = call.func.name.split(".")[1]
    if isinstance(target, ListV) and method in _LIST_CHANGES:
        call.interp._changed(target)
        result = _change_list(call, target, method)
        if result is not None:
            return result
        # a change not followed: what the list holds is not known any more
        target.items[:] = [Many(call.text, call.origin)]
        return call.unknown()
    if isinstance(target, ListV):
        if method == "copy":
            return ListV(list(target.items))
        if method == "index":
            for i, item in enumerate(target.items):
                if isinstance(item, Many):
                    break
                if equal(item, call.args[0]):
                    return Const(i, call.origin)
    if isinstance(target, TupleV) and method == "index":
        for i, item in enumerate(target.items):
            if equal(item, call.args[0]):
                return Const(i, call.origin)
    return call.unknown()


def _change_list(call: BuiltinCall, target: ListV, method: str) -> Value | None:
    """Make the change a list method makes, and give its result; None: it cannot be
    known."""
    items = target.items
    args = call.args
    if call.keywords:
        return None
    if method == "append" and len(args) == 1 and len(items) < MAX_ITEMS:
        items.append(args[0])
        return Const(None)
    if method == "extend" and len(args) == 1:
        more = iterate(args[0])
        if more is None:  # words not known, after those that are (as `+=` leaves them)
            items.append(Many(text_of(args[0])))
            return Const(None)
        items.extend(more[:MAX_ITEMS])
        return Const(None)
    if method == "insert" and len(args) == 2:
        where = python(args[0])
        if type(where) is int and (counted(items) or reaches([*items, args[1]], where)):
            items.insert(where, args[1])
            return Const(None)
        return None
    if method == "pop" and len(args) <= 1 and items:
        where = python(args[0]) if args else -1
        if type(where) is int and reaches(items, where):
            return items.pop(where)
        return None
    if method == "remove" and len(args) == 1:
        for index, item in enumerate(items):
            same = _same(item, args[0])
            if same is None:
                return None  # it may be the one removed
            if same:
                del items[index]
                return Const(None)
        return None  # ValueError
    if method == "clear" and not args:
        items.clear()
        return Const(None)
    if method == "reverse" and not args and counted(items):
        items.reverse()
        return Const(None)
    return None


def _same(a: Value, b: Value) -> bool | None:
    """Whether two items are equal, when that is known."""
    x, y = python(a), python(b)
    if isinstance(x, str | int | float | bool | type(None)) and \
            isinstance(y, str | int | float | bool | type(None)) and \
            not isinstance(a, Unknown) and not isinstance(b, Unknown):
        return x == y
    return None


def b_dict_method(call: BuiltinCall) -> Value:
    target = call.func.bound
    assert isinstance(target, DictV)
    method = call.func.name.split(".")[1]
    if method in ("update", "setdefault", "pop"):
        call.interp._changed(target)
    if method == "get":
        key = key_of(call.args[0])
        if key is not None and key in target.items:
            return target.items[key][1]
        if key is not None and target.complete:
            return call.args[1] if len(call.args) > 1 else Const(None)
        return call.unknown()
    if method in ("items", "keys", "values"):
        if not target.complete:
            return call.unknown()
        if method == "items":
            return ListV([TupleV((k, v)) for k, v in target.items.values()])
        return ListV([p[0 if method == "keys" else 1] for p in target.items.values()])
    if method == "update":
        if call.args:
            other = call.args[0]
            if not isinstance(other, DictV) or not other.complete:
                # keys not known may be any of those it has: their values are not known
                for key, (key_value, _) in target.items.items():
                    if not isinstance(other, DictV) or key not in other.items:
                        target.items[key] = (key_value, call.unknown())
                target.complete = False
            if isinstance(other, DictV):
                target.items.update(other.items)
        for name, value in call.keywords.items():
            target.items[("s", name)] = (Text.of(name), value)
        return Const(None)
    if method == "copy":
        return DictV(dict(target.items), target.complete)
    if method == "setdefault":
        key = key_of(call.args[0])
        if key is None:
            target.complete = False
            return call.unknown()
        if key not in target.items:
            target.items[key] = (call.args[0], call.args[1] if len(call.args) > 1 else Const(None))
        return target.items[key][1]
    if method == "pop":
        key = key_of(call.args[0])
        if key is not None and key in target.items:
            return target.items.pop(key)[1]
        if len(call.args) > 1 and key is not None and target.complete:
            return call.args[1]
        if key is None or not target.complete:
            target.items.clear()  # it may have removed any of them
            target.complete = False
    if method in ("popitem", "clear"):
        call.interp._changed(target)
        if method == "clear" and not call.args:
            target.items.clear()
            target.complete = True
            return Const(None)
        target.items.clear()
        target.complete = False
    return call.unknown()


def b_set_method(call: BuiltinCall) -> Value:
    target = call.func.bound
    assert isinstance(target, SetV)
    call.interp._changed(target)
    key = key_of(call.args[0])
    if key is None:
        return call.unknown()
    target.items.setdefault(key, call.args[0])
    return Const(None)


def b_shlex_join(call: BuiltinCall) -> Value:
    items = iterate(call.args[0])
    if items is None:
        return call.unknown()
    return _join(Text.of(" "), items, call)
