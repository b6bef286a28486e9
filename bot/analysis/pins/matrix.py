"""The matrix of one pin group, as the reports show it: a row per package, a column per place."""

from __future__ import annotations

from bot.analysis.pins.compare import Comparison
from bot.analysis.pins.places import Location, Occurrence
from bot.analysis.report import Table

MISMATCH = " ✗"
MAX_ROWS = 50


def table(compared: Comparison) -> Table:
    """The group's matrix: a row per package found in two places or flagged, a column per place."""
    inventory = compared.inventory
    marked = {(r.finding.path, r.finding.line, r.package) for r in compared.results}
    missing_names = {name for _, name in compared.missing}
    shown: list[str] = []
    for name, found in sorted(inventory.occurrences.items()):
        places = {o.location for o in found}
        flagged = any((o.location.path, o.line, name) in marked for o in found)
        if len(places) >= 2 or flagged or name in missing_names:
            shown.append(name)
    alone = len(inventory.occurrences) - len(shown)
    rows = [_row(compared, name, marked) for name in shown[:MAX_ROWS]]
    used = [i for i in range(len(inventory.locations)) if any(row[i + 1] for row in rows)]
    notes = [f"{MISMATCH.strip()} marks a mismatch (see the findings)."]
    if len(shown) > MAX_ROWS:
        notes.append(f"{len(shown) - MAX_ROWS} more packages are not shown.")
    if alone:
        notes.append(f"{alone} packages installed in one place only are not shown.")
    for paths in inventory.alternatives:
        notes.append("Alternative install paths: " + " / ".join(p.label for p in paths) + ".")
    kind = "ROCm image" if inventory.group.rocm else "image"
    return Table(
        title=f"Dependency pins: `{inventory.group.name}` group ({kind})",
        header=("package", *(inventory.locations[i].label for i in used)),
        rows=tuple((row[0], *(row[i + 1] for i in used)) for row in rows),
        note=" ".join(notes),
    )


def _row(compared: Comparison, name: str, marked: set[tuple[str | None, int | None, str | None]],
         ) -> tuple[str, ...]:
    inventory = compared.inventory
    cells = [name]
    by_place: dict[Location, list[Occurrence]] = {}
    for o in inventory.occurrences[name]:
        by_place.setdefault(o.location, []).append(o)
    for column in inventory.locations:
        here = by_place.get(column)
        if here:
            cells.append(", ".join(
                o.spec.shown + (MISMATCH if (o.location.path, o.line, name) in marked else "")
                for o in here
            ))
        elif (column, name) in compared.missing:
            cells.append("missing" + MISMATCH)
        elif name in inventory.via.get(column, {}):
            via = inventory.via[column][name]
            cells.append(f"{via.spec.shown} (via `{via.location.path}`)")
        else:
            cells.append("")
    return tuple(cells)
