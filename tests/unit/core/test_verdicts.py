"""The verdict of a difference between two rates (core.verdicts): the test decides, the interval sizes it."""

from __future__ import annotations

import pytest

from core.verdicts import RULE, Finding, finding, is_significant, within_detectable, worded

# (interval of the difference, p, finding, why)
RULES = [
    ((0.10, 0.30), 0.00001, Finding.SIGNIFICANT, "significant with a wide interval"),
    ((-0.0001, 0.04), 0.049, Finding.SIGNIFICANT, "p below 0.05 decides though the interval touches zero"),
    ((0.0001, 0.04), 0.05, Finding.NO_DIFFERENCE, "p of exactly 0.05 is not significant"),
    ((-0.05, 0.05), 0.9, Finding.NO_DIFFERENCE, "an interval of exactly ±5 points lies within it"),
    ((-0.02, 0.03), 0.6, Finding.NO_DIFFERENCE, "no difference within ±5"),
    ((-0.0501, 0.03), 0.3, Finding.TOO_FEW_TO_TELL, "too few to tell below -5 points"),
    ((-0.02, 0.0501), 0.3, Finding.TOO_FEW_TO_TELL, "too few to tell above +5 points"),
    ((0.01, 0.09), 0.051, Finding.TOO_FEW_TO_TELL, "clear of zero but not significant and wider than 5"),
    (None, None, Finding.TOO_FEW_TO_TELL, "a side without data"),
]


@pytest.mark.parametrize(
    ("interval", "p_value", "expected"), [row[:3] for row in RULES], ids=[row[3] for row in RULES]
)
def test_significant_below_p_five_percent_else_no_difference_within_five_points_else_too_few_to_tell(
    interval: tuple[float, float] | None, p_value: float | None, expected: Finding
) -> None:
    assert finding(interval, p_value) is expected


@pytest.mark.parametrize(("p_value", "significant"), [(0.0499, True), (0.05, False), (None, False)])
def test_significance_is_a_two_sided_p_below_five_percent(p_value: float | None, significant: bool) -> None:
    assert is_significant(p_value) is significant


def test_the_bounds_of_plus_minus_five_points_are_within() -> None:
    assert within_detectable(-0.05, 0.05) and not within_detectable(-0.05, 0.0500001)


@pytest.mark.parametrize(
    ("found", "difference", "words"),
    [
        (Finding.SIGNIFICANT, 0.2, "rise"),
        (Finding.SIGNIFICANT, -0.2, "drop"),
        (Finding.NO_DIFFERENCE, 0.01, "no difference of 5 points or more"),
        (Finding.TOO_FEW_TO_TELL, 0.2, "too few to tell"),
    ],
)
def test_a_significant_finding_reads_as_the_reports_rise_or_drop_the_others_as_themselves(
    found: Finding, difference: float, words: str
) -> None:
    assert worded(found, difference, rise="rise", drop="drop") == words


def test_the_printed_rule_says_the_test_decides_and_names_both_other_verdicts() -> None:
    assert "p < 0.05 (Fisher's exact test where a cell of the 2×2 table expects fewer than 5" in RULE
    assert "the test decides" in RULE
    assert "no difference of 5 points or more" in RULE and "too few to tell" in RULE
