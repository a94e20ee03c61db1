"""A two-sided report reads one way whatever chose its sides (core.two_sided_text): the same difference line,
the same side figures and the same formatter for `compare --at` and `compare --between`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime

import pytest

from core.between import between_report
from core.between_text import between_json, between_text
from core.comparison import comparison_report
from core.comparison_text import comparison_json, comparison_line, comparison_text
from core.counting import Count
from core.formatting import MINUS
from core.groups import ALL_RUNS, Group, GroupKind
from core.metrics import Metric
from core.periods import Grain, comparison_periods, open_from
from core.two_sided import Kind

METRIC = Metric.EDITED_RATE
AT = date(2026, 10, 12)  # a Monday
LONG_AFTER = int(datetime(2027, 6, 1, tzinfo=UTC).timestamp())
STABLE = Group(GroupKind.CONFIGURATION, "stable")
CANARY = Group(GroupKind.CONFIGURATION, "canary")


def _counts(numerator: int, denominator: int) -> dict[str, Count]:
    return {
        METRIC.value: Count(numerator, denominator, 0),
        Metric.RUNS.value: Count(denominator, denominator, 0),
    }


def _at(first: tuple[int, int], second: tuple[int, int]) -> list[str]:
    sides = comparison_periods(AT, 1, Grain.WEEK)
    figures = {(name, sides.before[0]): count for name, count in _counts(*first).items()}
    figures |= {(name, sides.after[0]): count for name, count in _counts(*second).items()}
    report = comparison_report(
        METRIC,
        AT,
        sides,
        figures,
        weeks=1,
        group=ALL_RUNS,
        grain=Grain.WEEK,
        releases=(),
        first_open=open_from(LONG_AFTER, 7 * 86_400, None, Grain.WEEK),
    )
    assert report.two_sided.kind is Kind.OVER_TIME
    return comparison_text(report)


def _between(first: tuple[int, int], second: tuple[int, int]) -> list[str]:
    week = date(2026, 10, 5)
    figures = tuple(
        {(name, week): count for name, count in _counts(*side).items()} for side in (first, second)
    )
    report = between_report(
        METRIC, Grain.WEEK, (STABLE, CANARY), (week,), (figures[0], figures[1]), first_open=AT + (AT - week)
    )
    assert report.two_sided.kind is Kind.BETWEEN
    return between_text(report)


def _difference(lines: list[str]) -> str:
    return next(line for line in lines if line.startswith("  difference "))


@pytest.mark.parametrize(("text", "names"), [(_at, "(after − before)"), (_between, "(canary − stable)")])
def test_the_difference_line_names_the_second_side_minus_the_first_in_either_kind(
    text: Callable[[tuple[int, int], tuple[int, int]], list[str]], names: str
) -> None:
    line = _difference(text((300, 1_000), (195, 1_000)))

    assert line == (
        f"  difference {MINUS}10.5 points {names}, 95% CI {MINUS}14.2 to {MINUS}6.7 (Newcombe); "
        "two-proportion z-test p < 0.0001"
    )


def test_both_kinds_give_a_side_the_same_figures_with_thousands_separators() -> None:
    at = _at((1_234, 5_678), (2_000, 6_000))
    between = _between((1_234, 5_678), (2_000, 6_000))

    figures = "1,234 / 5,678 = 21.7%, 95% CI 20.7% – 22.8%, excluded 0"
    assert any(line.startswith("  before  ") and line.endswith(f": {figures}") for line in at)
    assert f"  stable: {figures}" in between


def test_measure_rates_line_counts_with_thousands_separators() -> None:
    sides = comparison_periods(AT, 1, Grain.WEEK)
    figures = {(name, sides.before[0]): count for name, count in _counts(1_234, 5_678).items()}
    figures |= {(name, sides.after[0]): count for name, count in _counts(2_000, 6_000).items()}
    report = comparison_report(
        METRIC, AT, sides, figures, weeks=1, group=ALL_RUNS, grain=Grain.WEEK, releases=(), first_open=AT
    )

    line = comparison_line(report)

    assert "(1,234/5,678)" in line and "(2,000/6,000)" in line


def test_both_documents_name_the_difference_by_their_sides_and_carry_the_same_rules() -> None:
    sides = comparison_periods(AT, 1, Grain.WEEK)
    figures = {(name, sides.before[0]): count for name, count in _counts(30, 100).items()}
    figures |= {(name, sides.after[0]): count for name, count in _counts(40, 100).items()}
    at = comparison_json(
        comparison_report(
            METRIC, AT, sides, figures, weeks=1, group=ALL_RUNS, grain=Grain.WEEK, releases=(), first_open=AT
        )
    )
    week = date(2026, 10, 5)
    both = tuple(
        {(name, week): count for name, count in _counts(*side).items()} for side in ((30, 100), (40, 100))
    )
    between = between_json(between_report(METRIC, Grain.WEEK, (STABLE, CANARY), (week,), both, first_open=AT))

    assert "after_minus_before" in at["difference"] and "second_minus_first" in between["difference"]
    assert (at["rule"], at["need_rule"]) == (between["rule"], between["need_rule"])
    assert at["difference"]["p_value"] == between["difference"]["p_value"]


def test_the_difference_line_names_fishers_exact_test_where_it_gave_the_p() -> None:
    line = _difference(_at((0, 42), (1, 4)))

    assert line.endswith("(Newcombe); Fisher's exact test p = 0.0870")
