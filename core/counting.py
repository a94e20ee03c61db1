"""How the facts and outcomes the database counted become rates (DESIGN.md, "Rates"; core.metrics).

Facts and derived outcomes, counted per period and group by the database (the tallies), become numerator,
denominator and excluded per metric (`rate_counts`). A group is all runs, a configuration or a skill, never an
editor (core.groups); a period is the UTC day or ISO week of the run's end (core.periods). Each metric's
counting is a table here: which state of a fact or which outcome is in its numerator, its denominator, or
excluded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from enum import StrEnum
from itertools import groupby
from typing import TypeVar

from core.answers import AnswerState, ClaimState, DenialState
from core.facts import Exclusion
from core.go_on import GoOnPath, GoOnPaths
from core.groups import Group, groups_of
from core.metrics import Metric
from core.outcomes import CallOutcome, EditScope
from core.periods import Grain, period_of
from core.waits import GoOnState


@dataclass(frozen=True)
class Count:
    numerator: int = 0
    denominator: int = 0
    excluded: int = 0
    # The rule versions (core.outcomes.RULE_VERSION) of the derived runs counted here; empty for a count of
    # facts. Summed as a set, like the figures; not part of a count's value (core.rule_versions).
    rule_versions: frozenset[str] = field(default=frozenset(), compare=False)

    def __add__(self, other: Count) -> Count:
        return Count(
            self.numerator + other.numerator,
            self.denominator + other.denominator,
            self.excluded + other.excluded,
            self.rule_versions | other.rule_versions,
        )

    @property
    def empty(self) -> bool:
        """Nothing counted and nothing excluded: the period has no data for the metric (absent, never 0%)."""
        return self.denominator == 0 and self.excluded == 0


@dataclass(frozen=True)
class FactTally:
    """Facts the database counted per period, group values and states."""

    period: date
    configuration: str | None
    skill: str | None
    answer: str
    notice: bool
    claim: str
    denial: str
    go_on: str
    problems: str  # Exclusion values joined by commas
    runs: int  # the sum of the facts' runs (answers without their run add none)
    facts: int
    since_first_notice: bool = False  # at or after the installation's first stored notice (NOTICE_AGREEMENT)
    go_on_paths: GoOnPaths = GoOnPaths()  # the facts' "go on" messages by path, summed (not per fact)


@dataclass(frozen=True)
class OutcomeTally:
    """Derived runs (tx_runrecord_run_outcome) per period, group values and outcome."""

    period: date
    configuration: str | None
    skill: str | None
    outcome: str
    runs: int
    rule_version: str = ""  # the version of the rules the runs were derived under


@dataclass(frozen=True)
class OpenTally:
    """Runs still inside their window (Metric.WINDOW_OPEN) per period of the run's end and group values."""

    period: date
    configuration: str | None
    skill: str | None
    runs: int


@dataclass(frozen=True)
class EditedWrite:
    """An EDITED run's EDITED write (tx_runrecord_write_outcome); edit_scope None: the run has no such row."""

    period: date
    configuration: str | None
    skill: str | None
    run_uid: int
    edit_scope: str | None
    rule_version: str = ""  # the version of the rules the run was derived under


@dataclass(frozen=True)
class EditedTally:
    """EDITED runs per period, group values, edit scope and rule version; scope None: no EDITED write of the
    run has a scope this version knows."""

    period: date
    configuration: str | None
    skill: str | None
    scope: EditScope | None
    runs: int
    rule_version: str = ""  # the version of the rules the runs were derived under


# (in the numerator, in the denominator, excluded) for each state of a fact.
Counted = tuple[bool, bool, bool]
NUMERATOR: Counted = (True, True, False)
DENOMINATOR: Counted = (False, True, False)
EXCLUDED: Counted = (False, False, True)
NOT_COUNTED: Counted = (False, False, False)

CLAIM_COUNTS: Mapping[ClaimState, Counted] = {
    ClaimState.NO_CLAIM: DENOMINATOR,
    ClaimState.WROTE: DENOMINATOR,
    ClaimState.NOTHING_SAVED: NUMERATOR,
    ClaimState.CANNOT_TELL: EXCLUDED,
}
DENIAL_COUNTS: Mapping[DenialState, Counted] = {
    DenialState.NO_EARLIER_WRITE: NOT_COUNTED,
    DenialState.DENIES: NUMERATOR,
    DenialState.DOES_NOT_DENY: DENOMINATOR,
    DenialState.CANNOT_TELL: EXCLUDED,
}
# (recomputation, stored notice) → counted. The recomputation says nothingSaved exactly where
# claimed_unwritten_rate counts a claim the run never made; where it cannot tell, the answer is excluded.
AGREEMENT_COUNTS: Mapping[tuple[ClaimState, bool], Counted] = {
    (ClaimState.NOTHING_SAVED, True): NUMERATOR,
    (ClaimState.NO_CLAIM, False): NUMERATOR,
    (ClaimState.WROTE, False): NUMERATOR,
    (ClaimState.NOTHING_SAVED, False): DENOMINATOR,
    (ClaimState.NO_CLAIM, True): DENOMINATOR,
    (ClaimState.WROTE, True): DENOMINATOR,
    (ClaimState.CANNOT_TELL, True): EXCLUDED,
    (ClaimState.CANNOT_TELL, False): EXCLUDED,
}
GO_ON_COUNTS: Mapping[GoOnState, Counted] = {
    GoOnState.NO: DENOMINATOR,
    GoOnState.YES: NUMERATOR,
    GoOnState.CANNOT_TELL: EXCLUDED,
}
# Each path of a stored "go on" (core.go_on) is the numerator of its metric; every such message is in the
# denominator of all three, and an unreadable user message in its place is excluded from all three.
GO_ON_PATH_METRICS: Mapping[GoOnPath, Metric] = {
    GoOnPath.FINISHED_OUTSIDE: Metric.GO_ON_FINISHED_OUTSIDE,
    GoOnPath.SECOND_RUN: Metric.GO_ON_SECOND_RUN,
    GoOnPath.UNKNOWN: Metric.GO_ON_UNKNOWN,
}
# 003_…: a known outcome is in the denominator of the three outcome rates; UNKNOWN is excluded from them and
# reported beside them as its share of all derived runs (DESIGN.md, "Rates").
OUTCOME_METRICS: Mapping[Metric, Mapping[CallOutcome, Counted]] = {
    Metric.EDITED_RATE: {
        CallOutcome.EDITED: NUMERATOR,
        CallOutcome.DISCARDED: DENOMINATOR,
        CallOutcome.ACCEPTED_UNCHANGED: DENOMINATOR,
        CallOutcome.UNKNOWN: EXCLUDED,
    },
    Metric.DISCARDED_RATE: {
        CallOutcome.EDITED: DENOMINATOR,
        CallOutcome.DISCARDED: NUMERATOR,
        CallOutcome.ACCEPTED_UNCHANGED: DENOMINATOR,
        CallOutcome.UNKNOWN: EXCLUDED,
    },
    Metric.ACCEPTED_UNCHANGED_RATE: {
        CallOutcome.EDITED: DENOMINATOR,
        CallOutcome.DISCARDED: DENOMINATOR,
        CallOutcome.ACCEPTED_UNCHANGED: NUMERATOR,
        CallOutcome.UNKNOWN: EXCLUDED,
    },
    Metric.UNKNOWN_SHARE: {
        CallOutcome.EDITED: DENOMINATOR,
        CallOutcome.DISCARDED: DENOMINATOR,
        CallOutcome.ACCEPTED_UNCHANGED: DENOMINATOR,
        CallOutcome.UNKNOWN: NUMERATOR,
    },
}
# A run's edit scope when its EDITED writes differ (DESIGN.md rule 7): an editor undoing the run decides, then
# a real edit of a field the run wrote, then a scope that cannot rule one out, then an edit of other fields;
# only a run whose every EDITED write merely released the record is released_only. So released_only +
# other_fields is the share of EDITED runs that over-report (003_…, "Revisit when": "EDITED is measured and
# high").
SCOPE_PRECEDENCE: tuple[EditScope, ...] = (
    EditScope.REVERTED,
    EditScope.SAME_FIELDS,
    EditScope.FIELDS_UNKNOWN,
    EditScope.OTHER_FIELDS,
    EditScope.RELEASED_ONLY,
)
SCOPE_METRICS: Mapping[EditScope, Metric] = {
    EditScope.RELEASED_ONLY: Metric.EDITED_RELEASED_ONLY,
    EditScope.REVERTED: Metric.EDITED_REVERTED,
    EditScope.SAME_FIELDS: Metric.EDITED_SAME_FIELDS,
    EditScope.OTHER_FIELDS: Metric.EDITED_OTHER_FIELDS,
    EditScope.FIELDS_UNKNOWN: Metric.EDITED_FIELDS_UNKNOWN,
}
ANSWER_METRICS = (Metric.NOTHING_SAVED_RATE, Metric.CLAIMED_UNWRITTEN_RATE, Metric.DENIAL_RATE)

Key = tuple[Metric, date, Group]


# Where a count comes from: the run's configuration and the conversation's skill (core.groups.groups_of).
Source = tuple[str | None, str | None]


@dataclass
class RateCounts:
    """Counts per metric, period and group; exclusions by reason per metric (group all).

    Summed per metric, period and source (configuration and skill) first and spread over the groups of each
    source only when read: a tally adds to one key instead of to all its groups."""

    exclusions: Counter[tuple[Metric, Exclusion]] = field(default_factory=Counter)
    sums: dict[tuple[Metric, date, str | None, str | None], Count] = field(default_factory=dict)

    def add(
        self,
        metric: Metric,
        period: date,
        source: Source,
        count: Count,
        reason: Exclusion | None = None,
    ) -> None:
        """Add a count to every group of a period; an exclusion is noted under its reason once."""
        key = (metric, period, *source)
        found = self.sums.get(key)
        self.sums[key] = count if found is None else found + count
        if count.excluded and reason is not None:
            self.exclusions[(metric, reason)] += count.excluded

    @property
    def counts(self) -> dict[Key, Count]:
        """The counts per metric, period and group."""
        counts: dict[Key, Count] = {}
        for (metric, period, configuration, skill), count in self.sums.items():
            for group in groups_of(configuration, skill):
                key = (metric, period, group)
                found = counts.get(key)
                counts[key] = count if found is None else found + count
        return counts

    def rows(self) -> list[tuple[Key, Count]]:
        """Every metric, period and group with data; one without data is absent, never a zero."""
        return sorted(
            ((key, count) for key, count in self.counts.items() if not count.empty),
            key=lambda item: (item[0][0].value, item[0][1], item[0][2]),
        )


def _count(counted: Counted, units: int, rule_version: str = "") -> Count:
    in_numerator, in_denominator, excluded = counted
    versions = frozenset((rule_version,)) if rule_version and any(counted) else frozenset()
    return Count(
        units if in_numerator else 0, units if in_denominator else 0, units if excluded else 0, versions
    )


S = TypeVar("S", bound=StrEnum)


def _state(kind: type[S], value: str, fallback: S) -> S:
    found = _known(kind, value)
    return fallback if found is None else found


def _known(kind: type[S], value: str) -> S | None:
    try:
        return kind(value)
    except ValueError:
        return None


def _reason(problems: str, *candidates: Exclusion) -> Exclusion | None:
    found = set(problems.split(",")) if problems else set()
    return next((reason for reason in candidates if reason.value in found), None)


def rate_counts(
    facts: Iterable[FactTally],
    outcomes: Iterable[OutcomeTally],
    edited: Iterable[EditedTally],
    window_open: Iterable[OpenTally] = (),
) -> RateCounts:
    """Numerator, denominator and excluded per metric, period and group (core.metrics has the definitions).

    `edited`: the EDITED runs counted by their scope (`edited_tallies`). `window_open`: the runs still inside
    their window, counted as of the measurement.
    """
    result = RateCounts()
    for tally in facts:
        _add_facts(result, tally)
    for outcome_tally in outcomes:
        source = (outcome_tally.configuration, outcome_tally.skill)
        outcome = _known(CallOutcome, outcome_tally.outcome)
        for metric, counts in OUTCOME_METRICS.items():
            counted = EXCLUDED if outcome is None else counts[outcome]
            reason = Exclusion.OUTCOME_UNREADABLE if outcome is None else None
            count = _count(counted, outcome_tally.runs, outcome_tally.rule_version)
            result.add(metric, outcome_tally.period, source, count, reason)
    for edited_tally in edited:
        source, runs = (edited_tally.configuration, edited_tally.skill), edited_tally.runs
        versions = frozenset((edited_tally.rule_version,)) if edited_tally.rule_version else frozenset()
        for run_scope, metric in SCOPE_METRICS.items():
            if edited_tally.scope is None:
                count = Count(0, 0, runs, versions)
                result.add(metric, edited_tally.period, source, count, Exclusion.EDIT_SCOPE_MISSING)
            else:
                count = Count(runs if edited_tally.scope is run_scope else 0, runs, 0, versions)
                result.add(metric, edited_tally.period, source, count)
    for open_tally in window_open:
        source = (open_tally.configuration, open_tally.skill)
        runs = open_tally.runs
        result.add(Metric.WINDOW_OPEN, open_tally.period, source, Count(runs, runs, 0))
    return result


_Tally = TypeVar("_Tally", FactTally, OutcomeTally, EditedTally, OpenTally)


def in_grain(
    day_tallies: Iterable[_Tally], grain: Grain, first_open: date, listed: Collection[date]
) -> list[_Tally]:
    """Tallies of days as the tallies of `grain`'s periods from `first_open` on and of the `listed` ones.

    A week's tallies are its days' with the week for their period: `rate_counts` adds every tally into its
    period's counts, and a run's week is the week of its day, so the facts are counted once for both
    grains."""
    chosen: list[_Tally] = []
    for tally in day_tallies:
        period = period_of(tally.period, grain)
        if period >= first_open or period in listed:
            chosen.append(tally if period == tally.period else replace(tally, period=period))
    return chosen


def _add_facts(result: RateCounts, tally: FactTally) -> None:
    period, units = tally.period, tally.facts
    source: Source = (tally.configuration, tally.skill)
    if tally.runs:
        result.add(Metric.RUNS, period, source, Count(tally.runs, tally.runs, 0))
    answer = _state(AnswerState, tally.answer, AnswerState.UNREADABLE)
    if answer is AnswerState.UNREADABLE:
        metrics = ANSWER_METRICS + ((Metric.NOTICE_AGREEMENT,) if tally.since_first_notice else ())
        for metric in metrics:
            result.add(metric, period, source, Count(0, 0, units), Exclusion.MESSAGE_UNREADABLE)
    elif answer is AnswerState.READ:
        notice = Count(units if tally.notice else 0, units, 0)
        result.add(Metric.NOTHING_SAVED_RATE, period, source, notice)
        claim = _state(ClaimState, tally.claim, ClaimState.CANNOT_TELL)
        reason = _reason(
            tally.problems, Exclusion.RUN_MISSING, Exclusion.NO_EVENTS, Exclusion.EVENTS_UNREADABLE
        )
        claim_count = _count(CLAIM_COUNTS.get(claim, EXCLUDED), units)
        result.add(Metric.CLAIMED_UNWRITTEN_RATE, period, source, claim_count, reason)
        if tally.since_first_notice:
            agreement = _count(AGREEMENT_COUNTS.get((claim, tally.notice), EXCLUDED), units)
            result.add(Metric.NOTICE_AGREEMENT, period, source, agreement, reason)
        denial = _state(DenialState, tally.denial, DenialState.CANNOT_TELL)
        denial_count = _count(DENIAL_COUNTS.get(denial, EXCLUDED), units)
        reason = _reason(tally.problems, Exclusion.RUN_RECORD_UNREADABLE)
        result.add(Metric.DENIAL_RATE, period, source, denial_count, reason)
    go_on = _state(GoOnState, tally.go_on, GoOnState.CANNOT_TELL)
    if go_on is not GoOnState.NONE:
        reason = _reason(tally.problems, Exclusion.USER_MESSAGE_UNREADABLE)
        result.add(Metric.GO_ON_WHILE_WAITING, period, source, _count(GO_ON_COUNTS[go_on], units), reason)
    paths = tally.go_on_paths
    if not paths.empty:
        for path, metric in GO_ON_PATH_METRICS.items():
            count = Count(paths.of(path), paths.messages, paths.unreadable)
            result.add(metric, period, source, count, Exclusion.USER_MESSAGE_UNREADABLE)


def edited_tallies(edited: Iterable[EditedWrite]) -> list[EditedTally]:
    """The EDITED runs of these writes counted per period, group values, scope and rule version, each run's
    scope the first of SCOPE_PRECEDENCE among its EDITED writes (adapters.tallies.edited_tallies counts the
    same in SQL). The writes come in run order, one run at a time."""
    runs: Counter[tuple[date, str | None, str | None, EditScope | None, str]] = Counter()
    for _, writes in groupby(edited, key=lambda write: write.run_uid):
        found = list(writes)
        scopes = {_known(EditScope, write.edit_scope or "") for write in found}
        first = found[0]
        scope = next((s for s in SCOPE_PRECEDENCE if s in scopes), None)
        runs[(first.period, first.configuration, first.skill, scope, first.rule_version)] += 1
    return [
        EditedTally(period, configuration, skill, scope, count, rule_version)
        for (period, configuration, skill, scope, rule_version), count in runs.items()
    ]
