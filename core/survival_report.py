"""The survival of AI text per group, as `runrecord survival` prints it and the Rates page draws it.

Which writes count (003_…, "What EDITED means"; DESIGN.md rule 4): every derived write with a known
outcome. An EDITED or DISCARDED write is changed at `first_change_after_s`, the first human row of its record
inside the window as derive-outcomes stores it — of any kind, so a move or an unhide before the edit dates
it. An ACCEPTED_UNCHANGED write is censored at the end of its window (a move, undelete or publish inside it
is no modification). Left out, and counted beside the curve: UNKNOWN writes (and any value no rule writes),
and EDITED or DISCARDED writes no human row dates — a record that is gone (hard-deleted, or deleted=1)
without a delete row inside the window.

A configuration with fewer than MIN_GROUP_RUNS runs among the writes of its curve is too few to show
(DESIGN.md, "Privacy"); the curve is over every derived write, so that is its one period. All writes are
always shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.groups import Group, shown
from core.survival import Curve, LogRank, Tally, kaplan_meier, log_rank
from core.time import DAY_S

HOUR_S = 3_600
# The times the curve is read at: the review (an hour), the next days, the week the window lasts by default.
MARKS_S: tuple[int, ...] = (HOUR_S, DAY_S, 2 * DAY_S, 3 * DAY_S, 5 * DAY_S, 7 * DAY_S)


@dataclass(frozen=True)
class GroupTallies:
    """What the database counted for one group: the tallies of its curve and what was left out."""

    group: Group
    tallies: tuple[Tally, ...]
    runs: int  # runs with a write in the curve
    unknown: int  # UNKNOWN writes (or a value no rule writes): left out
    undated: int  # EDITED or DISCARDED writes without a human row that dates the change: left out
    window_s: int  # the longest window the group's writes were judged in (0: none)


@dataclass(frozen=True)
class GroupCurve:
    group: Group
    runs: int
    unknown: int
    undated: int
    window_s: int
    curve: Curve | None  # None when the group is too few to show

    @property
    def shown(self) -> bool:
        """A group below MIN_GROUP_RUNS runs is too few to show."""
        return self.curve is not None


@dataclass(frozen=True)
class SurvivalReport:
    curves: tuple[GroupCurve, ...]
    marks: tuple[int, ...]  # seconds after the write
    log_rank: LogRank | None  # with exactly two curves, both shown
    window_s: int  # the window's end the curves are censored at (the longest, if runs had several)


def marks_within(window_s: int) -> tuple[int, ...]:
    """MARKS_S inside the window, and the window's end: no write is observed after it."""
    inside = tuple(mark for mark in MARKS_S if mark < window_s)
    return (*inside, window_s) if window_s > 0 else inside


def group_curve(counted: GroupTallies) -> GroupCurve:
    """The group's Kaplan–Meier curve, or none when the group is too few to show."""
    visible = shown(counted.group, counted.runs) and bool(counted.tallies)
    return GroupCurve(
        group=counted.group,
        runs=counted.runs,
        unknown=counted.unknown,
        undated=counted.undated,
        window_s=counted.window_s,
        curve=kaplan_meier(counted.tallies) if visible else None,
    )


def survival_report(groups: Sequence[GroupTallies], *, window_s: int) -> SurvivalReport:
    """A curve per group; the log-rank test when two groups are compared and both are shown.

    `window_s` is the window the setting gives: the end of the curves when no derived run names its own."""
    curves = tuple(group_curve(counted) for counted in groups)
    tested = None
    if len(groups) == 2 and all(curve.shown for curve in curves):
        tested = log_rank(groups[0].tallies, groups[1].tallies)
    longest = max((curve.window_s for curve in curves), default=0) or window_s
    return SurvivalReport(curves, marks_within(longest), tested, longest)
