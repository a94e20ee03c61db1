"""The metric registry: one row per metric, with its name, its label, its exact definition and its kind.

The definition (numerator, denominator, excluded) is what `runrecord compare` prints and the table of rates
in docs/rates.md says, word for word (tests/unit/test_readme.py holds them to it); the label is how the
dashboard names the metric. Every metric but the counts is a proportion of units; a unit that could feed it
but cannot be read is excluded, never counted as a zero. Two metrics are counts, not rates: the runs, and the
runs still inside their window; they are stored the same way, with the denominator equal to the numerator, so
that the pages read every figure from one table. How each metric is counted from the facts is core.counting's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from core.formatting import EDIT_SCOPE_LABELS
from core.outcomes import EditScope

# What a measurement writes beyond what the facts say: raise when measure-rates writes a metric it did not
# write before (the facts stay as they are, so nothing is counted afresh). Stored as a mark, so that a page
# can tell a database measured before a metric existed ("not counted yet") from one where it counts none.
# 2: window_open. 3: notice_agreement (closed periods get it too: measure-rates rewrites every period once).
# 4: go_on_finished_outside, go_on_second_run, go_on_unknown. 5: each row counted from derived outcomes
# names the rule versions of its runs (core.rule_versions; every period is written once more to fill them).
RATES_VERSION = 5


class Metric(StrEnum):
    # Runs ending in the period: the count a group's "too few to show" is judged by (DESIGN.md, "Privacy").
    RUNS = "runs"
    EDITED_RATE = "edited_rate"
    DISCARDED_RATE = "discarded_rate"
    ACCEPTED_UNCHANGED_RATE = "accepted_unchanged_rate"
    UNKNOWN_SHARE = "unknown_share"
    EDITED_RELEASED_ONLY = "edited_released_only"
    EDITED_SAME_FIELDS = "edited_same_fields"
    EDITED_REVERTED = "edited_reverted"
    EDITED_OTHER_FIELDS = "edited_other_fields"
    EDITED_FIELDS_UNKNOWN = "edited_fields_unknown"
    NOTHING_SAVED_RATE = "nothing_saved_rate"
    CLAIMED_UNWRITTEN_RATE = "claimed_unwritten_rate"
    GO_ON_WHILE_WAITING = "go_on_while_waiting"
    # What followed each stored "go on" sent while an approval waited (core.go_on): the split of 001_'s paths.
    GO_ON_FINISHED_OUTSIDE = "go_on_finished_outside"
    GO_ON_SECOND_RUN = "go_on_second_run"
    GO_ON_UNKNOWN = "go_on_unknown"
    DENIAL_RATE = "denial_rate"
    # The recomputed notice (claimed_unwritten_rate's rule) against the chat's stored one, from the first
    # stored notice on: the evidence that the back-filled rate before the notice measures what it does after.
    NOTICE_AGREEMENT = "notice_agreement"
    # Runs ending in the period that are still inside their window (not derived yet): a count, beside the
    # outcome mix. A period that holds none has no row (a closed period never holds one).
    WINDOW_OPEN = "window_open"


class Better(StrEnum):
    """Which way a metric should move: what a verdict, a tile's colour and an alert call better or worse."""

    HIGHER = "higher"
    LOWER = "lower"
    NEITHER = "neither"  # a count, or a share whose move is neither good nor bad by itself


class MetricKind(StrEnum):
    RATE = "rate"  # numerator over denominator, with its interval; compared across releases
    COUNT = "count"  # never compared, never given a rate or an interval


@dataclass(frozen=True)
class MetricDefinition:
    metric: Metric
    label: str  # how the dashboard names it
    numerator: str
    denominator: str
    excluded: str
    kind: MetricKind = MetricKind.RATE
    stored_since: int = 1  # the RATES_VERSION from which measure-rates stores it
    short_label: str = ""  # its name under a heading that names its family already; "" for the label
    better: Better = Better.NEITHER

    @property
    def count(self) -> bool:
        """A count, not a rate."""
        return self.kind is MetricKind.COUNT


_COUNT = "the same (a count, not a rate)"
_KNOWN_OUTCOME = "derived runs with a known outcome (accepted_unchanged, edited, discarded)"
_OUTCOME_EXCLUDED = "derived runs whose outcome is unknown, or a value no rule writes"
_SCOPE = (
    "EDITED runs of scope {scope} (a run's scope is the first of reverted, same_fields, fields_unknown, "
    "other_fields, released_only among its EDITED writes)"
)
_EDITED_RUNS = "EDITED runs"
_SCOPE_EXCLUDED = "EDITED runs without a scoped EDITED write"
_ANSWERS = (
    "completed answers: a completed run's last assistant message in its last segment (one per run), and the "
    "last assistant message naming a run that tx_nrllm_agentrun no longer holds"
)
_MESSAGES_UNREADABLE = "assistant messages whose payload cannot be read"
_RECOMPUTED = (
    'completed answers that claim a change (core.claims: a claim word such as "erledigt", "gespeichert", '
    '"created", "updated" with no negation such as "nicht", "nichts", "kein", "not" among the three words '
    "immediately before it, whatever punctuation or line break stands between them) while the run's "
    "events show no write (core.saved: no tool_write, and no approved call that ran without error — the call "
    "directly after an approval with approved = true: the first tool step after it that is no refusal "
    "(0.0 ms), no display tool and no question, and of the card's own tool where the segment before "
    "waited on one; a run without events or without its row is judged by its "
    "stored run record: a write an entry of it lists, else nothing saved when the answer's own entry exists "
    "and the run was never continued) — recomputed for every answer, also those stored before the notice "
    "existed"
)


_GO_ON_PLACES = (
    "inside a run's wait (as go_on_while_waiting reads it), or answered by a runFinishedOutside line (the "
    'chat writes it only for a "go on" while the conversation waits for an approval decided elsewhere)'
)
_GO_ON_MESSAGES = (
    f'stored "go on" messages sent while an approval waited: {_GO_ON_PLACES}; each counts in the period and '
    "configuration of the run that waited (for a runFinishedOutside line outside a wait: the last run that "
    "waited for an approval and started before it)"
)
_GO_ON_EXCLUDED = f"user messages whose payload cannot be read, sent {_GO_ON_PLACES}"


def _go_on(
    metric: Metric, numerator: str, short_label: str, better: Better = Better.NEITHER
) -> MetricDefinition:
    return MetricDefinition(
        metric,
        f'"go on" while an approval waits: {short_label}',
        numerator,
        _GO_ON_MESSAGES,
        _GO_ON_EXCLUDED,
        stored_since=4,
        short_label=short_label,
        better=better,
    )


def _scope(metric: Metric, scope: EditScope, better: Better = Better.NEITHER) -> MetricDefinition:
    short_label = EDIT_SCOPE_LABELS[scope]
    return MetricDefinition(
        metric,
        f"EDITED: {short_label}",
        _SCOPE.format(scope=scope.value),
        _EDITED_RUNS,
        _SCOPE_EXCLUDED,
        short_label=short_label,
        better=better,
    )


# The exact definitions and the labels, in the order docs/rates.md lists them.
METRICS: tuple[MetricDefinition, ...] = (
    MetricDefinition(
        Metric.RUNS, "runs", "runs ending in the period", _COUNT, "nothing", kind=MetricKind.COUNT
    ),
    MetricDefinition(
        Metric.EDITED_RATE,
        "EDITED",
        "derived runs with outcome edited",
        _KNOWN_OUTCOME,
        _OUTCOME_EXCLUDED,
        better=Better.LOWER,
    ),
    MetricDefinition(
        Metric.DISCARDED_RATE,
        "DISCARDED",
        "derived runs with outcome discarded",
        _KNOWN_OUTCOME,
        _OUTCOME_EXCLUDED,
        better=Better.LOWER,
    ),
    MetricDefinition(
        Metric.ACCEPTED_UNCHANGED_RATE,
        "ACCEPTED UNCHANGED",
        "derived runs with outcome accepted_unchanged",
        _KNOWN_OUTCOME,
        _OUTCOME_EXCLUDED,
        better=Better.HIGHER,
    ),
    MetricDefinition(
        Metric.UNKNOWN_SHARE,
        "UNKNOWN (share of derived runs)",
        "derived runs with outcome unknown",
        "all derived runs",
        "runs with an outcome value no rule writes",
        better=Better.LOWER,  # fewer runs the history cannot decide
    ),
    _scope(Metric.EDITED_RELEASED_ONLY, EditScope.RELEASED_ONLY),
    _scope(Metric.EDITED_REVERTED, EditScope.REVERTED, Better.LOWER),
    _scope(Metric.EDITED_SAME_FIELDS, EditScope.SAME_FIELDS),
    _scope(Metric.EDITED_OTHER_FIELDS, EditScope.OTHER_FIELDS),
    _scope(Metric.EDITED_FIELDS_UNKNOWN, EditScope.FIELDS_UNKNOWN, Better.LOWER),
    MetricDefinition(
        Metric.NOTHING_SAVED_RATE,
        "nothingSaved, stored by the chat",
        "completed answers the chat stored with the nothingSaved notice",
        _ANSWERS,
        _MESSAGES_UNREADABLE,
        better=Better.LOWER,
    ),
    MetricDefinition(
        Metric.CLAIMED_UNWRITTEN_RATE,
        "nothingSaved, recomputed from the runs",
        _RECOMPUTED,
        _ANSWERS,
        f"claiming answers whose run's events cannot be read, or are gone and the stored run record cannot "
        f"tell, and {_MESSAGES_UNREADABLE}",
        better=Better.LOWER,
    ),
    MetricDefinition(
        Metric.GO_ON_WHILE_WAITING,
        '"go on" while an approval waits',
        'conversations in which a whole user message was a "go on" phrase sent while a run waited for an '
        "approval",
        "conversations with a run that waited for an approval (an approval event, or the status "
        "waiting_for_approval); a conversation counts once, in the period and configuration of its first "
        "such run",
        "conversations without such a phrase but with an unreadable user message sent while an approval "
        "waited",
        better=Better.LOWER,  # a "go on" is an editor who did not see that the run waits for them
    ),
    _go_on(
        Metric.GO_ON_FINISHED_OUTSIDE,
        'stored "go on" messages with a runFinishedOutside line, on the message or on the next stored '
        "message: the run had been decided elsewhere and had finished",
        "decided elsewhere and finished",
    ),
    _go_on(
        Metric.GO_ON_SECOND_RUN,
        'stored "go on" messages without that line after which a second run started over the same '
        "transcript: a run of the conversation started at or after the message and before the next user "
        "message while the run that waited had not ended",
        "a second run started",
        Better.LOWER,  # two runs over one transcript (001_…)
    ),
    _go_on(
        Metric.GO_ON_UNKNOWN,
        'stored "go on" messages followed by neither: no runFinishedOutside line, and no run started before '
        "the next user message while the run that waited had not ended (nothing followed, the run that "
        "waited had ended first, or the runs cannot be found)",
        "neither can be read",
        Better.LOWER,
    ),
    MetricDefinition(
        Metric.DENIAL_RATE,
        "denials of earlier work",
        'completed answers that deny a change ("nichts gespeichert", "nothing was changed": a negation among '
        "the three words before a change or event word, in its clause, no contrast word between them)",
        "completed answers in conversations whose run record shows a write in an earlier segment (before the "
        "record existed: the runs' tool_write events)",
        f"answers in conversations whose run record cannot be read, and {_MESSAGES_UNREADABLE}",
        better=Better.LOWER,
    ),
    MetricDefinition(
        Metric.NOTICE_AGREEMENT,
        "nothingSaved, recomputed agrees with the chat's notice",
        "completed answers where the recomputation (the rule of claimed_unwritten_rate) and the notice the "
        "chat stored say the same: both nothingSaved, or neither",
        "completed answers stored at or after the first stored notice: the earliest completed answer in the "
        "installation that carries nothingSaved (an answer's time is its run's end; without its run, the "
        "message's)",
        "answers after it whose recomputation cannot tell (claiming answers whose run's events cannot be "
        "read, or are gone and the stored run record cannot tell), and assistant messages after it that "
        "cannot be read",
        stored_since=3,
        better=Better.HIGHER,
    ),
    MetricDefinition(
        Metric.WINDOW_OPEN,
        "window not closed yet",
        "runs ending in the period with at least one tool_write whose last write's window had not closed "
        "when measure-rates ran (last write at or after now − window) and without a derived outcome",
        _COUNT,
        "nothing; only runs ending at or after now − window are looked at, so a closed period has none and "
        "no row",
        kind=MetricKind.COUNT,
        stored_since=2,
    ),
)

DEFINITIONS: Mapping[Metric, MetricDefinition] = {definition.metric: definition for definition in METRICS}
# The counts (no rate, no interval, no comparison) and the rates: what compare and the pages offer.
COUNTS: tuple[Metric, ...] = tuple(definition.metric for definition in METRICS if definition.count)
RATES: tuple[Metric, ...] = tuple(definition.metric for definition in METRICS if not definition.count)
STORED_SINCE: Mapping[Metric, int] = {definition.metric: definition.stored_since for definition in METRICS}


def parse_metric(name: str) -> Metric | None:
    """The metric a name stands for; None for a name that is none."""
    try:
        return Metric(name)
    except ValueError:
        return None
