"""`--format github`: workflow commands, so `rocmbot analyze` annotates a plain Actions step."""

from __future__ import annotations

from bot.analysis.findings import Severity
from bot.analysis.report import Report

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report) -> str:
    lines = []
    for f in report.findings:
        props = []
        if f.path:
            props.append(f"file={_property(f.path)}")
            if f.line:
                props.append(f"line={f.line}")
        props.append(f"title={_property(f'{f.rule} {f.slug}')}")
        body = f.message + (f"\nFix: {f.fix}" if f.fix else "")
        lines.append(f"::{_LEVEL[f.severity]} {','.join(props)}::{_data(body)}")
    counts = report.counts()
    selected = ", ".join(s.path for s in report.selected) or "none"
    lines.append(
        f"::notice title=rocmbot::{counts['error']} errors, {counts['warning']} warnings; "
        f"ROCm runs selected: {_data(selected)}"
    )
    return "\n".join(lines) + "\n"
