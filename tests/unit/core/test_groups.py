"""The groups a rate is counted in (core.groups): never an editor, and never a group too small to show."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.groups import (
    ALL_RUNS,
    MIN_GROUP_RUNS,
    Group,
    GroupKind,
    hidden_groups,
    parse_group,
    show_group,
    shown,
)


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


def test_a_period_without_a_group_too_few_to_show_hides_none() -> None:
    assert hidden_groups(30, {"a": 10, "b": 20}) == frozenset()


def test_one_small_group_hides_the_smallest_other_too_so_all_runs_less_the_rest_tells_nothing() -> None:
    hidden = hidden_groups(38, {"small": 3, "b": 6, "c": 9, "d": 20})

    assert hidden == {"small", "b"}


def test_runs_no_group_holds_count_with_the_hidden_groups_against_subtraction() -> None:
    # 3 runs of the small configuration and 2 runs without a configuration: all less the groups shown is a
    # figure of 5 runs, which names nobody more than a group of five.
    assert hidden_groups(25, {"small": 3, "b": 20}) == {"small"}
    assert hidden_groups(24, {"small": 3, "b": 20}) == {"small", "b"}


def test_a_group_with_figures_but_no_run_hides_the_smallest_other_beside_all_runs() -> None:
    # The answers of runs nr-llm purged keep their skill: all runs' answer figures less the skills shown
    # would be theirs.
    assert hidden_groups(30, {"a": 10, "": 20, "s": 0}) == {"s", "a"}


def test_fewer_than_five_runs_no_group_shown_holds_hide_the_smallest_group_beside_all_runs() -> None:
    # One configuration shown beside all runs: all less it is the figure of the 3 runs of the others.
    assert hidden_groups(23, {"stable": 20}) == {"stable"}
    assert hidden_groups(25, {"stable": 20}) == frozenset()
    assert hidden_groups(20, {"stable": 20}) == frozenset()


def test_several_small_groups_hide_as_many_of_the_smallest_others_as_make_five_runs_together() -> None:
    hidden = hidden_groups(40, {"x": 1, "y": 1, "a": 5, "b": 5, "c": 28})

    assert hidden == {"x", "y", "a"}


@given(st.dictionaries(st.text(max_size=3), st.integers(0, 12), max_size=6), st.integers(0, 10))
def test_all_runs_less_the_groups_shown_is_never_a_figure_of_one_to_four_runs_unless_every_group_is_hidden(
    runs: dict[str, int], outside: int
) -> None:
    all_runs = sum(runs.values()) + outside
    hidden = hidden_groups(all_runs, runs)
    left = all_runs - sum(count for value, count in runs.items() if value not in hidden)

    assert {value for value, count in runs.items() if not show_group(count)} <= hidden
    assert left == 0 or left >= MIN_GROUP_RUNS or hidden == set(runs)
    if hidden and hidden != set(runs):
        assert left >= MIN_GROUP_RUNS
