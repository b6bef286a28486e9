"""`--format json`: schema 1, exactly the interface DESIGN.md documents."""

from __future__ import annotations

import json

from bot.analysis.report import Report


def render(report: Report) -> str:
    return json.dumps(report.as_json(), indent=2, ensure_ascii=False) + "\n"
