"""One style for every figure (core.formatting), and verdicts that say which way is good (core.verdicts)."""

from __future__ import annotations

import pytest

from core.formatting import (
    MINUS,
    NO_SKILL,
    count,
    duration,
    group_text,
    interval_text,
    outcome_label,
    p_text,
    percent,
    plural,
    points,
    signed,
    window_days,
)
from core.groups import ALL_RUNS, Group, GroupKind
from core.metrics import METRICS, Better, Metric
from core.outcomes import CallOutcome
from core.verdicts import FELL, HIGHER, LOWER, ROSE, Finding, headline, is_move, is_worse, judged, worded


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "p < 0.0001"),
        (0.00009, "p < 0.0001"),
        (0.0001, "p = 0.0001"),
        (0.0123, "p = 0.0123"),
        (0.046, "p = 0.0460"),
        (1.0, "p = 1.0000"),
        (None, "p –"),
        (float("nan"), "p –"),
    ],
)
def test_a_p_value_reads_with_four_decimals_or_as_below_the_smallest_they_show(
    value: float | None, text: str
) -> None:
    assert p_text(value) == text


def test_no_p_value_ever_reads_as_an_exact_zero() -> None:
    assert all(p_text(value) != "p = 0.0000" for value in (0.0, 1e-12, 0.00004999))


@pytest.mark.parametrize(
    ("value", "text"),
    [(-0.105, f"{MINUS}10.5"), (-0.092, f"{MINUS}9.2"), (0.042, "+4.2"), (0.0, "0.0"), (-0.0004, "0.0")],
)
def test_a_difference_in_points_has_a_true_minus_sign_and_a_plus_and_no_signed_zero(
    value: float, text: str
) -> None:
    assert points(value) == text


def test_a_signed_figure_never_carries_a_hyphen_minus() -> None:
    assert "-" not in signed(-3.25, 2) and signed(-3.25, 2) == f"{MINUS}3.25"


@pytest.mark.parametrize(
    ("value", "text"), [(0.123, "12.3%"), (1.0, "100.0%"), (0.0, "0.0%"), (None, "–"), (float("nan"), "–")]
)
def test_a_share_reads_as_a_percentage_with_one_decimal(value: float | None, text: str) -> None:
    assert percent(value) == text


@pytest.mark.parametrize(
    ("value", "text"), [(0, "0"), (999, "999"), (2034, "2,034"), (2_060_000, "2,060,000")]
)
def test_a_count_has_thousands_separators(value: int, text: str) -> None:
    assert count(value) == text


@pytest.mark.parametrize(
    ("value", "text"), [(0, "0 runs"), (1, "1 run"), (2, "2 runs"), (2060, "2,060 runs")]
)
def test_a_count_of_things_takes_the_singular_only_for_one(value: int, text: str) -> None:
    assert plural(value, "run") == text


def test_an_irregular_plural_is_given() -> None:
    assert (plural(1, "entry", "entries"), plural(3, "entry", "entries")) == ("1 entry", "3 entries")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (151_784 * 60, "105 days"),
        (86_400, "1 day"),
        (26 * 3_600, "26 hours"),
        (86_399, "23 hours"),
        (90 * 60, "90 minutes"),
        (3_600, "1 hour"),
        (2 * 60, "2 minutes"),
        (59, "59 seconds"),
        (1, "1 second"),
        (0, "0 seconds"),
    ],
)
def test_a_duration_reads_in_the_largest_unit_it_holds_twice_or_exactly_once(seconds: int, text: str) -> None:
    assert duration(seconds) == text


@pytest.mark.parametrize(
    ("outcome", "label"),
    [
        (CallOutcome.ACCEPTED_UNCHANGED, "accepted unchanged"),
        (CallOutcome.EDITED, "edited"),
        (CallOutcome.DISCARDED, "discarded"),
        (CallOutcome.UNKNOWN, "unknown"),
    ],
)
def test_each_observed_outcome_has_one_label_in_words(outcome: CallOutcome, label: str) -> None:
    assert outcome_label(outcome.value) == label
    assert "_" not in outcome_label(outcome.value) and outcome_label(outcome.value).islower()


def test_a_value_no_rule_writes_is_shown_as_it_is() -> None:
    assert outcome_label("exploded") == "exploded"


@pytest.mark.parametrize(
    ("group", "text"),
    [
        (ALL_RUNS, "all runs"),
        (Group(GroupKind.CONFIGURATION, "seo-assistant"), "configuration seo-assistant"),
        (Group(GroupKind.SKILL, "seo-check"), "skill seo-check"),
        (Group(GroupKind.SKILL, ""), NO_SKILL),
    ],
)
def test_a_group_reads_in_words_and_conversations_without_a_skill_read_no_skill(
    group: Group, text: str
) -> None:
    assert group_text(group) == text
    assert group_text(group) != "skill none"


# --- which way is good --------------------------------------------------------------------------------------


def test_every_rate_the_dashboard_tiles_name_says_which_way_is_good() -> None:
    better = {definition.metric: definition.better for definition in METRICS}

    assert better[Metric.EDITED_RATE] is Better.LOWER
    assert better[Metric.NOTHING_SAVED_RATE] is better[Metric.CLAIMED_UNWRITTEN_RATE] is Better.LOWER
    assert better[Metric.DENIAL_RATE] is better[Metric.GO_ON_WHILE_WAITING] is Better.LOWER
    assert better[Metric.ACCEPTED_UNCHANGED_RATE] is better[Metric.NOTICE_AGREEMENT] is Better.HIGHER
    assert all(better[d.metric] is Better.NEITHER for d in METRICS if d.count)


@pytest.mark.parametrize(
    ("better", "difference", "worth"),
    [
        (Better.LOWER, 0.3, "worse"),
        (Better.LOWER, -0.3, "better"),
        (Better.HIGHER, 0.3, "better"),
        (Better.HIGHER, -0.3, "worse"),
        (Better.NEITHER, 0.3, None),
        (Better.LOWER, 0.0, None),
    ],
)
def test_a_move_is_better_or_worse_by_the_metrics_direction(
    better: Better, difference: float, worth: str | None
) -> None:
    assert judged(better, difference) == worth


@pytest.mark.parametrize(
    ("found", "difference", "better", "verdict"),
    [
        (Finding.SIGNIFICANT, 0.56, Better.LOWER, "rose significantly: worse"),
        (Finding.SIGNIFICANT, -0.2, Better.LOWER, "fell significantly: better"),
        (Finding.SIGNIFICANT, 0.1, Better.HIGHER, "rose significantly: better"),
        (Finding.SIGNIFICANT, -0.1, Better.HIGHER, "fell significantly: worse"),
        (Finding.SIGNIFICANT, 0.1, Better.NEITHER, "rose significantly"),
        (Finding.NO_DIFFERENCE, 0.01, Better.LOWER, "no difference of 5 points or more"),
        (Finding.TOO_FEW_TO_TELL, 0.2, Better.LOWER, "too few to tell"),
    ],
)
def test_a_verdict_over_time_says_the_move_and_whether_it_is_better_or_worse(
    found: Finding, difference: float, better: Better, verdict: str
) -> None:
    assert worded(found, difference, rise=ROSE, drop=FELL, better=better) == verdict


def test_a_verdict_between_two_groups_says_higher_or_lower_and_whether_it_is_better_or_worse() -> None:
    assert worded(Finding.SIGNIFICANT, 0.3, rise=HIGHER, drop=LOWER, better=Better.LOWER) == (
        "significantly higher: worse"
    )
    assert worded(Finding.SIGNIFICANT, -0.3, rise=HIGHER, drop=LOWER, better=Better.LOWER) == (
        "significantly lower: better"
    )


def test_a_headline_names_the_metric_before_the_verdict() -> None:
    assert headline("EDITED", "rose significantly: worse") == "EDITED rose significantly: worse"
    assert headline("EDITED", "too few to tell") == "EDITED: too few to tell"
    assert is_move("significantly lower: better") and not is_move("too few to tell")
    assert is_worse("fell significantly: worse") and not is_worse("rose significantly")


def test_an_interval_reads_as_two_percentages_joined_by_an_en_dash() -> None:
    assert interval_text(0.3124, 0.4081) == "31.2% – 40.8%"


@pytest.mark.parametrize(
    ("seconds", "text"), [(86_400, "1 day"), (7 * 86_400, "7 days"), (43_200, "0.5 days")]
)
def test_a_window_reads_in_days_one_day_without_a_plural(seconds: int, text: str) -> None:
    assert window_days(seconds) == text
