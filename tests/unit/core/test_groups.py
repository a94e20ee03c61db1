"""The groups a rate is counted in (core.groups): never an editor, and never a group too small to show."""

from __future__ import annotations

import pytest

from core.groups import ALL_RUNS, MIN_GROUP_RUNS, Group, GroupKind, parse_group, show_group, shown


@pytest.mark.parametrize(
    ("text", "group"),
    [
        ("all", ALL_RUNS),
        ("configuration:seo-assistant", Group(GroupKind.CONFIGURATION, "seo-assistant")),
        ("skill:seo-check", Group(GroupKind.SKILL, "seo-check")),
        ("skill:none", Group(GroupKind.SKILL, "")),
        ("editor:90001", None),
        ("be_user:1", None),
        ("seo-check", None),
    ],
)
def test_a_group_is_all_a_configuration_or_a_skill_never_an_editor(text: str, group: Group | None) -> None:
    assert parse_group(text) == group


def test_a_configuration_or_skill_below_five_runs_is_too_few_to_show_but_all_runs_always_show() -> None:
    assert not shown(Group(GroupKind.CONFIGURATION, "x"), 4)
    assert shown(Group(GroupKind.CONFIGURATION, "x"), 5)
    assert shown(ALL_RUNS, 1)


@pytest.mark.parametrize(("runs", "shown"), [(0, False), (4, False), (5, True), (6, True), (1000, True)])
def test_a_group_with_fewer_than_five_runs_is_too_few_to_show(runs: int, shown: bool) -> None:
    result = show_group(runs)

    assert result is shown
    assert MIN_GROUP_RUNS == 5
