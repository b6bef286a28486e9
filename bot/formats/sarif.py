"""`--format sarif`: SARIF 2.1.0, uploadable to GitHub code scanning."""

from __future__ import annotations

import json

from bot import __version__
from bot.analysis.findings import RULES, Severity, fingerprints
from bot.analysis.report import Report

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render(report: Report) -> str:
    used = sorted({f.rule for f in report.findings})
    index = {rule_id: i for i, rule_id in enumerate(used)}
    rules = [
        {
            "id": rule_id,
            "name": RULES[rule_id].slug,
            "shortDescription": {"text": RULES[rule_id].summary},
            "fullDescription": {"text": RULES[rule_id].summary},
            "help": {"text": RULES[rule_id].doc or RULES[rule_id].summary,
                     "markdown": RULES[rule_id].doc or RULES[rule_id].summary},
            "defaultConfiguration": {"level": _LEVEL[RULES[rule_id].severity]},
        }
        for rule_id in used
    ]
    results = []
    # the fingerprint `analyze` judges the base by: rule, file, test, message without line
    # numbers, and `:2`, `:3` for the later findings alike (a test's CUDA and ROCm launches)
    for f, key in zip(report.findings, fingerprints(report.findings), strict=True):
        text = f.message + (f" Fix: {f.fix}" if f.fix else "")
        result: dict[str, object] = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _LEVEL[f.severity],
            "message": {"text": text},
        }
        if f.path:
            location: dict[str, object] = {"artifactLocation": {"uri": f.path,
                                                                "uriBaseId": "%SRCROOT%"}}
            if f.line:
                location["region"] = {"startLine": f.line}
            result["locations"] = [{"physicalLocation": location}]
        result["partialFingerprints"] = {"rocmbot/v3": key}
        if f.baseline is not None:
            result["baselineState"] = f.baseline
        results.append(result)
    run: dict[str, object] = {
        "tool": {"driver": {
            "name": "rocmbot",
            "version": __version__,
            "semanticVersion": __version__,
            "rules": rules,
        }},
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    doc = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
