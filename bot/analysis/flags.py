"""Command lines as the launcher's argument parser sees them: words, flags, later wins.

A :class:`~bot.analysis.values.Text` becomes tokens (a word keeps the origin of each of its
characters, so the value of ``--expert-model-parallel-size 4`` knows the line that set the
``4``); tokens become :class:`Setting` values for the flags the PAR rules read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.analysis.values import Choice, Chunk, Hole, Origin, Part, Text, Unknown

Kind = Literal["int", "bool", "str"]

# flag spelling -> (symbol, kind)
FLAGS: dict[str, tuple[str, Kind]] = {
    "--actor-num-nodes": ("nodes", "int"),
    "--actor-num-gpus-per-node": ("gpus_per_node", "int"),
    "--tensor-model-parallel-size": ("tp", "int"),
    "--pipeline-model-parallel-size": ("pp", "int"),
    "--context-parallel-size": ("cp", "int"),
    "--expert-model-parallel-size": ("ep", "int"),
    "--expert-tensor-parallel-size": ("etp", "int"),
    "--num-layers-per-virtual-pipeline-stage": ("vpp_layers", "int"),
    "--num-virtual-stages-per-pipeline-rank": ("vpp", "int"),
    "--virtual-pipeline-model-parallel-size": ("vpp", "int"),
    "--decoder-first-pipeline-num-layers": ("uneven_first", "int"),
    "--decoder-last-pipeline-num-layers": ("uneven_last", "int"),
    "--pipeline-model-parallel-layout": ("pipeline_layout", "str"),
    "--colocate": ("colocate", "bool"),
    "--rollout-num-gpus": ("rollout_gpus", "int"),
    "--rollout-num-gpus-per-engine": ("engine_gpus", "int"),
    "--sglang-pp-size": ("sglang_pp", "int"),
    "--sglang-pipeline-parallel-size": ("sglang_pp", "int"),
    "--sglang-dp-size": ("sglang_dp", "int"),
    "--sglang-data-parallel-size": ("sglang_dp", "int"),
    "--sglang-ep-size": ("sglang_ep", "int"),
    "--sglang-expert-parallel-size": ("sglang_ep", "int"),
    "--sglang-enable-dp-attention": ("dp_attention", "bool"),
    "--sglang-moe-a2a-backend": ("sglang_a2a", "str"),
    "--sglang-enable-waterfill": ("sglang_waterfill", "bool"),
    "--train-backend": ("backend", "str"),
    "--dp-replicate-size": ("dp_replicate", "int"),
    "--num-layers": ("layers", "int"),
    "--num-attention-heads": ("heads", "int"),
    "--num-query-groups": ("query_groups", "int"),
    "--num-experts": ("experts", "int"),
    "--global-batch-size": ("gbs", "int"),
    "--micro-batch-size": ("mbs", "int"),
    "--use-dynamic-batch-size": ("dynamic_batch", "bool"),
    "--seq-length": ("seq_length", "int"),
    "--overlap-p2p-comm": ("overlap_p2p", "bool"),
    "--sequence-parallel": ("sequence_parallel", "bool"),
    "--account-for-embedding-in-pipeline-split": ("account_embedding", "bool"),
    "--account-for-loss-in-pipeline-split": ("account_loss", "bool"),
}

# The first spelling of each symbol, for messages and fixes.
CANONICAL: dict[str, str] = {}
for _flag, (_symbol, _) in FLAGS.items():
    CANONICAL.setdefault(_symbol, _flag)

# Flags only the RL trainer's command line has: an external call given text with one of
# these is a training launch (a checkpoint conversion with `--tensor-model-parallel-size`
# is not).
LAUNCH_FLAGS = frozenset({
    "--actor-num-nodes", "--actor-num-gpus-per-node", "--colocate", "--rollout-num-gpus",
    "--rollout-num-gpus-per-engine", "--train-backend",
})


@dataclass(slots=True, unsafe_hash=True)  # made by the thousand: see values.Value
class Word:
    text: str
    origins: tuple[Origin | None, ...]  # one per character


@dataclass(slots=True, unsafe_hash=True)  # made by the thousand: see values.Value
class Opaque:
    """A word that cannot be decided (an unresolved expression in the command)."""

    text: str
    origin: Origin | None
    quiet: bool = False
    known: str = field(default="", compare=False)  # the word's characters that are known
    at_most: int | None = field(default=None, compare=False)  # its number's bound, if any


@dataclass(frozen=True, slots=True)
class Branches:
    """Words chosen by an undecidable condition: one token list per alternative."""

    options: tuple[tuple[Token, ...], ...]
    cond: str
    origin: Origin | None


Token = Word | Opaque | Branches


@dataclass(slots=True, unsafe_hash=True)  # made by the thousand: see values.Value
class Setting:
    """The value a flag was given, where, and with which spelling."""

    value: int | bool | str | Unknown
    origin: Origin | None
    flag: str


def _starts_blank(parts: Sequence[Part]) -> bool:
    first = parts[0] if parts else None
    if isinstance(first, Choice):  # a word starts there whichever option is taken
        return all(_starts_blank(o) if o else _starts_blank(parts[1:]) for o in first.options)
    return first is None or (isinstance(first, Chunk) and (not first.text or first.text[0].isspace()))


def _ends_blank(parts: Sequence[Part]) -> bool:
    last = parts[-1] if parts else None
    return last is None or (isinstance(last, Chunk) and (not last.text or last.text[-1].isspace()))


def tokenize(parts: Sequence[Part]) -> list[Token]:
    """Split text into words as a shell would split an unquoted command line."""
    out: list[Token] = []
    chars: list[str] = []  # pieces of the current word
    origins: list[Origin | None] = []  # one per character of the current word
    holes: list[Hole] = []

    def flush() -> None:
        if holes:
            quiet = all(h.quiet for h in holes) and not chars
            bound = holes[0].at_most if len(holes) == 1 else None
            out.append(Opaque(" ".join(h.text for h in holes), holes[0].origin, quiet,
                              "".join(chars), bound))
        elif chars:
            out.append(Word("".join(chars), tuple(origins)))
        chars.clear()
        origins.clear()
        holes.clear()

    for index, part in enumerate(parts):
        if isinstance(part, Chunk):
            text = part.text
            if not text:
                continue
            # every whitespace character ends the word (str.split() splits where isspace())
            words = text.split()
            origin = part.origin
            if text[0].isspace():
                flush()
            elif words and (chars or holes):  # the first word goes on with the last part's
                chars.append(words[0])
                origins.extend([origin] * len(words[0]))
                if len(words) == 1 and not text[-1].isspace():
                    continue
                flush()
                words = words[1:]
            if not words:
                continue
            for word in words[:-1]:  # whole words: nothing is pending here
                out.append(Word(word, (origin,) * len(word)))
            if text[-1].isspace():
                out.append(Word(words[-1], (origin,) * len(words[-1])))
            else:  # the last word may go on in the next part
                chars.append(words[-1])
                origins.extend([origin] * len(words[-1]))
        elif isinstance(part, Hole):
            holes.append(part)
        else:
            left = (not chars and not holes) or all(_starts_blank(o) for o in part.options)
            right = _starts_blank(parts[index + 1:]) or all(_ends_blank(o) for o in part.options)
            if left and right:
                flush()
                out.append(Branches(tuple(tuple(tokenize(o)) for o in part.options), part.cond,
                                    part.origin))
            else:
                holes.append(Hole(part.cond, part.origin))
    flush()
    return out


def text_tokens(text: Text) -> list[Token]:
    return tokenize(text.parts)


_INT = re.compile(r"[+-]?\d{1,9}\Z")


def _value(kind: Kind, text: str) -> int | str | Unknown:
    if kind == "int":
        return int(text) if _INT.match(text) else Unknown(text)
    return text


@dataclass(slots=True)
class Parsed:
    settings: dict[str, Setting]
    opaque: list[Opaque]


def parse(tokens: Sequence[Token], parsed: Parsed | None = None) -> Parsed:
    """Apply the flags of ``tokens`` in order (a later flag wins)."""
    parsed = parsed or Parsed({}, [])
    settings = parsed.settings
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if isinstance(tok, Opaque):
            if not tok.quiet:
                parsed.opaque.append(tok)
            continue
        if isinstance(tok, Branches):
            _branches(tok, parsed)
            continue
        if not tok.text.startswith("--"):
            continue
        name, eq, inline = tok.text.partition("=")
        entry = FLAGS.get(name)
        nxt = tokens[i] if i < len(tokens) else None
        if entry is None:
            if not eq and isinstance(nxt, Opaque):
                i += 1  # the value of a flag the rules do not read
            continue
        symbol, kind = entry
        if kind == "bool":
            settings[symbol] = Setting(True, tok.origins[0], name)
            continue
        if eq:
            at = len(name) + 1
            origin = tok.origins[at] if at < len(tok.origins) else tok.origins[0]
            settings[symbol] = Setting(_value(kind, inline), origin, name)
            continue
        if isinstance(nxt, Word) and not nxt.text.startswith("--"):
            settings[symbol] = Setting(_value(kind, nxt.text), nxt.origins[0], name)
            i += 1
        elif isinstance(nxt, Opaque):
            settings[symbol] = Setting(Unknown(nxt.text, nxt.origin), nxt.origin, name)
            i += 1
        elif isinstance(nxt, Branches):
            settings[symbol] = Setting(Unknown(nxt.cond, nxt.origin), nxt.origin, name)
            i += 1
    return parsed


def _branches(tok: Branches, parsed: Parsed) -> None:
    results = [parse(option, Parsed(dict(parsed.settings), [])) for option in tok.options]
    for result in results:
        parsed.opaque.extend(result.opaque)
    symbols = dict.fromkeys(s for r in results for s in r.settings)
    for symbol in symbols:
        values = [r.settings.get(symbol) for r in results]
        first = values[0]
        same = all(v is not None and first is not None and _same(v.value, first.value)
                   for v in values)
        if same and first is not None:
            parsed.settings[symbol] = first
        else:
            flag = next(v.flag for v in values if v is not None)
            parsed.settings[symbol] = Setting(Unknown(tok.cond, tok.origin), tok.origin, flag)


def _same(a: int | bool | str | Unknown, b: int | bool | str | Unknown) -> bool:
    if isinstance(a, Unknown) or isinstance(b, Unknown):
        return a is b
    return type(a) is type(b) and a == b


def has_flag(tokens: Sequence[Token], names: frozenset[str] | None = None) -> bool:
    """Whether any word is a flag (one of ``names`` when given), branches included."""
    for tok in tokens:
        if isinstance(tok, Word) and tok.text.startswith("--"):
            if names is None or tok.text.partition("=")[0] in names:
                return True
        elif isinstance(tok, Branches) and any(has_flag(o, names) for o in tok.options):
            return True
    return False


def shell_text(text: str, path: str) -> Text:
    """The flags of a shell model script (``MODEL_ARGS=( --num-layers 40 ... )``): words
    with a ``$`` are not known."""
    lines = text.splitlines()
    start, end = 0, len(lines)
    for number, line in enumerate(lines):
        if re.match(r"\s*MODEL_ARGS=\(", line):
            start = number
            end = next((n + 1 for n in range(number, len(lines))
                        if lines[n].rstrip().endswith(")")), len(lines))
            break
    parts: list[Part] = []
    for number in range(start, end):
        line = lines[number].split("#", 1)[0]
        line = line.replace("MODEL_ARGS=(", " ").replace(")", " ").replace("\\", " ")
        origin = Origin(path, number + 1)
        for raw in line.split():
            word = raw.strip("\"'")
            if "$" in word:
                parts.append(Hole(word, origin))
            else:
                parts.append(Chunk(word, origin))
            parts.append(Chunk(" ", origin))
    return Text(tuple(parts))
