"""The re-enable sweep: its configuration, when it is due, what it runs, and its issue."""

from __future__ import annotations

from config.repo import ReenableConfig, defaults, parse_config


def test_the_sweep_is_off_by_default_and_a_bare_yaml_off_means_off() -> None:
    assert defaults().reenable == ReenableConfig("off", 600.0, True)
    loaded = parse_config("reenable:\n  sweep: off\n  budget_gpu_minutes: 90\n")
    assert loaded.problems == [] and loaded.config.reenable == ReenableConfig("off", 90.0, True)
    weekly = parse_config("reenable:\n  sweep: weekly\n  issue: false\n").config.reenable
    assert weekly == ReenableConfig("weekly", 600.0, False)


def test_an_unknown_cadence_or_a_negative_budget_falls_back_to_the_defaults() -> None:
    loaded = parse_config("reenable:\n  sweep: monthly\n")
    assert loaded.config.reenable == ReenableConfig() and loaded.problems[0].key == "reenable.sweep"
    loaded = parse_config("reenable:\n  sweep: daily\n  budget_gpu_minutes: -1\n")
    assert loaded.config.reenable == ReenableConfig()
    assert [p.key for p in loaded.problems] == ["reenable.budget_gpu_minutes"]
