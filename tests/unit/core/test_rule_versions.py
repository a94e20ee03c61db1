"""Which rule versions the runs behind a figure were derived under (core.rule_versions), and how the counts
and a comparison's sides carry them (core.counting, core.comparison, core.comparison_text)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from core.comparison import comparison_report
from core.comparison_text import comparison_text
from core.counting import Count, EditedWrite, OutcomeTally, edited_tallies, rate_counts
from core.groups import ALL_RUNS, Group, GroupKind
from core.metrics import Metric
from core.periods import Grain, comparison_periods
from core.rule_versions import STORED_LENGTH, mixes, mixing_note, ordered, read, stored

OLD, NEW = "2026.11-1", "2026.12-1"
WEEK = date(2026, 11, 30)


@pytest.mark.parametrize(
    ("versions", "note"),
    [
        ((), None),
        ((NEW,), None),
        ((NEW, NEW), None),
        (("", NEW), None),  # a row that recorded no version names none
        ((NEW, OLD), f"mixes runs derived under rules {OLD} and {NEW}"),
        (("2027.1-1", OLD, NEW), f"mixes runs derived under rules {OLD}, {NEW} and 2027.1-1"),
    ],
    ids=["none", "one", "one twice", "one and none", "two", "three"],
)
def test_a_figure_says_it_mixes_rule_versions_only_when_its_runs_span_two_or_more(
    versions: tuple[str, ...], note: str | None
) -> None:
    assert mixing_note(versions) == note
    assert mixes(versions) is (note is not None)


def test_versions_are_ordered_by_their_numbers_not_their_text() -> None:
    assert ordered(["2026.11-1", "2026.9-2", "2026.9-1"]) == ("2026.9-1", "2026.9-2", "2026.11-1")


def test_the_stored_text_reads_back_as_the_same_versions() -> None:
    assert stored({NEW, OLD}) == f"{OLD},{NEW}"
    assert read(stored({NEW, OLD})) == {OLD, NEW}
    assert read("") == frozenset() and read(None) == frozenset()


def test_more_versions_than_the_column_holds_keep_the_oldest_and_the_newest() -> None:
    versions = [f"2026.{month}-{n}" for month in range(1, 13) for n in range(1, 10)]

    text = stored(versions)

    assert len(text) <= STORED_LENGTH
    assert read(text) == {"2026.1-1", "2026.12-9"}


def test_counts_add_their_rule_versions_as_a_set_and_compare_by_their_figures_only() -> None:
    total = Count(1, 2, 0, frozenset({OLD})) + Count(3, 4, 1, frozenset({NEW}))

    assert total.rule_versions == {OLD, NEW}
    assert total == Count(4, 6, 1)


def test_an_outcome_rate_names_the_rule_versions_of_its_runs_in_every_group() -> None:
    outcomes = [
        OutcomeTally(WEEK, "seo-assistant", "seo-check", "edited", 2, OLD),
        OutcomeTally(WEEK, "content-assistant", "", "accepted_unchanged", 3, NEW),
    ]
    edited = [EditedWrite(WEEK, "seo-assistant", "seo-check", 1, "same_fields", OLD)]

    counts = rate_counts([], outcomes, edited_tallies(edited)).counts

    seo = Group(GroupKind.CONFIGURATION, "seo-assistant")
    assert counts[(Metric.EDITED_RATE, WEEK, ALL_RUNS)].rule_versions == {OLD, NEW}
    assert counts[(Metric.UNKNOWN_SHARE, WEEK, ALL_RUNS)].rule_versions == {OLD, NEW}
    assert counts[(Metric.EDITED_RATE, WEEK, seo)].rule_versions == {OLD}
    assert counts[(Metric.EDITED_SAME_FIELDS, WEEK, ALL_RUNS)].rule_versions == {OLD}


def test_a_side_of_a_comparison_mixes_rule_versions_when_its_periods_do() -> None:
    at = WEEK
    sides = comparison_periods(at, 2, Grain.WEEK)
    before = {p: frozenset({OLD}) for p in sides.before} | {sides.before[-1]: frozenset({OLD, NEW})}
    figures = {("edited_rate", p): Count(5, 20, 0, versions) for p, versions in before.items()}
    figures |= {("edited_rate", p): Count(5, 20, 0, frozenset({NEW})) for p in sides.after}
    figures |= {("runs", p): Count(20, 20, 0) for p in (*sides.before, *sides.after)}

    report = comparison_report(
        Metric.EDITED_RATE,
        at,
        sides,
        figures,
        weeks=2,
        group=ALL_RUNS,
        grain=Grain.WEEK,
        releases=(),
        first_open=at + timedelta(weeks=4),
    )
    lines = comparison_text(report)

    assert report.before.rule_versions == (OLD, NEW) and report.after.rule_versions == (NEW,)
    assert f"  before mixes runs derived under rules {OLD} and {NEW}" in lines
    assert not any(line.startswith("  after") and "mixes" in line for line in lines)
