"""How every figure reads, on the pages, on the command line and in the CSV: one style for each kind.

* a share: "12.3%"; a difference of shares in signed points with a true minus sign: "+4.2", "−10.5";
* a p-value: "p = 0.0123", or "p < 0.0001" below the smallest value four decimals can show;
* a count with thousands separators: "2,060"; a count of things with its noun: "1 run", "2,060 runs";
* a duration in whole units of the largest unit it holds twice (or exactly once): "105 days", "26 hours";
* an observed outcome as words: "accepted unchanged"; an edit scope: "same fields (the AI's own fields)";
* a group: "all runs", "configuration X", "(no skill)".
"""

from __future__ import annotations

import math

from core.groups import Group, GroupKind
from core.outcomes import CallOutcome, EditScope
from core.time import DAY_S

# The minus sign (U+2212), not the hyphen: a signed figure reads the same in every place that shows one.
MINUS = "\u2212"
NO_FIGURE = "–"
# The smallest p four decimals show; below it "p = 0.0000" would claim an exact zero.
SMALLEST_P = 0.0001

OUTCOME_LABELS: dict[CallOutcome, str] = {
    CallOutcome.ACCEPTED_UNCHANGED: "accepted unchanged",
    CallOutcome.EDITED: "edited",
    CallOutcome.DISCARDED: "discarded",
    CallOutcome.UNKNOWN: "unknown",
}
# The scopes of EDITED (DESIGN.md rule 7), each with what it means.
EDIT_SCOPE_LABELS: dict[EditScope, str] = {
    EditScope.RELEASED_ONLY: "released only (only hidden changed)",
    EditScope.REVERTED: "reverted (every field the AI wrote set back)",
    EditScope.SAME_FIELDS: "same fields (the AI's own fields)",
    EditScope.OTHER_FIELDS: "other fields",
    EditScope.FIELDS_UNKNOWN: "fields unknown",
}
NO_SKILL = "(no skill)"  # the skill group of conversations without a skill

# (seconds in the unit, singular, plural), largest first.
_UNITS: tuple[tuple[int, str, str], ...] = (
    (86_400, "day", "days"),
    (3_600, "hour", "hours"),
    (60, "minute", "minutes"),
    (1, "second", "seconds"),
)


def signed(value: float, decimals: int = 1) -> str:
    """A signed figure with a true minus sign: "+4.2", "−1.0"; a value that rounds to zero reads "0.0"."""
    text = f"{value:+.{decimals}f}"
    if float(text) == 0:
        return f"{0:.{decimals}f}"
    return text.replace("-", MINUS)


def percent(value: float | None, decimals: int = 1) -> str:
    """A share as "12.3%", or "–" when there is none."""
    if value is None or math.isnan(value):
        return NO_FIGURE
    return f"{value * 100:.{decimals}f}%".replace("-", MINUS)


def points(value: float) -> str:
    """A difference of shares in signed percentage points: "+4.2", "−1.0"."""
    return signed(value * 100)


def p_text(value: float | None) -> str:
    """The p-value as it reads in a line: "p = 0.0123", or "p < 0.0001"; "p –" when there is none."""
    if value is None or math.isnan(value):
        return f"p {NO_FIGURE}"
    return f"p < {SMALLEST_P}" if value < SMALLEST_P else f"p = {value:.4f}"


def interval_text(low: float, high: float) -> str:
    """An interval of two rates, as percentages: "31.2% – 40.8%"."""
    return f"{percent(low)} – {percent(high)}"


def count(value: int) -> str:
    """A count with thousands separators: "2,060"."""
    return f"{value:,}"


def plural(value: int, singular: str, plural_form: str | None = None) -> str:
    """A count with its noun: "1 run", "2,060 runs" (the plural is singular + "s" unless given)."""
    noun = singular if value == 1 else (plural_form or f"{singular}s")
    return f"{count(value)} {noun}"


def window_days(seconds: int) -> str:
    """A window in days as a setting gives it: "7 days", "1 day", "0.5 days"."""
    days = seconds / DAY_S
    return f"{days:g} {'day' if days == 1 else 'days'}"


def duration(seconds: float) -> str:
    """A duration in whole units of the largest unit it holds twice, or exactly once: "105 days", "1 day",
    "26 hours" (not "1 day", which would drop a sixth of it), "90 minutes"."""
    whole = max(int(seconds), 0)
    for size, one, many in _UNITS:
        if whole >= 2 * size or whole == size or size == 1:
            return plural(whole // size, one, many)
    raise AssertionError("unreachable: the last unit is one second")


def outcome_label(outcome: str) -> str:
    """An observed outcome as words ("accepted unchanged"); a value no rule writes stays as it is."""
    try:
        return OUTCOME_LABELS[CallOutcome(outcome)]
    except ValueError:
        return outcome


def scope_label(scope: str) -> str:
    """An edit scope as words ("same fields (the AI's own fields)"); a value no rule writes stays as it is."""
    try:
        return EDIT_SCOPE_LABELS[EditScope(scope)]
    except ValueError:
        return scope


def group_text(group: Group) -> str:
    """How a group reads: "all runs", "configuration X", "skill Y", "(no skill)"."""
    if group.kind is GroupKind.ALL:
        return "all runs"
    if group.kind is GroupKind.SKILL and not group.value:
        return NO_SKILL
    return f"{group.kind.value} {group.value}"
