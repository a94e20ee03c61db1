"""One run in full: its segments with their run-record entries and step readings, its writes with outcomes.

The readings are core's (core.refused, core.run_record); the entries are those `runrecord record` rebuilds
for the run's conversation. Each write is shown as dashboard.queries.run_writes shapes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from adapters import outcomes as stored_outcomes
from adapters import schema
from adapters.conversations import conversation_naming_run, load_conversation
from adapters.database import reported
from adapters.events import read_events
from adapters.runs import runs_by_uuid
from core.cards import CardOutcome
from core.events import Segment, split_segments
from core.formatting import outcome_label, plural
from core.model_rounds import ModelRound, model_rounds, round_of_steps
from core.record_rebuild import card_readings, rebuild_record
from core.refused import Opening, SegmentContext, StepReading, opening_of, read_segment
from core.run_record import DISPLAY_TOOLS, CardReading, RunRecordEntry, build_entries, read_cards
from dashboard.queries.run_writes import WriteView, write_views
from dashboard.queries.runs import ended, observed_later

OPENED_BY = {
    Opening.TURN: "the turn",
    Opening.APPROVED: "an approval",
    Opening.DECLINED: "a declined card",
    Opening.INPUT: "an answer to a question",
}


NOT_OFFERED = "not offered"  # the mark on a tool the model asked for that its round did not offer


class RunNotFoundError(LookupError):
    """No run with that uuid."""


@dataclass(frozen=True)
class SegmentView:
    """One segment: what opened it, its run-record entry, its tool steps as the activity list reads them."""

    index: int
    opened_by: str
    entry: RunRecordEntry
    steps: list[dict[str, Any]]


@dataclass(frozen=True)
class RunDetail:
    uid: int
    uuid: str
    configuration: str
    status: str
    ended: str
    started_at: int
    finished_at: int
    outcome: str  # the observed outcome, or what stands in its place
    window_s: int
    conversation: int | None  # shown to administrators only
    segments: list[SegmentView]
    writes: list[WriteView]
    problems: list[str] = field(default_factory=list)
    # Each model round: offered, asked for, ran (administrators only: remote tool names are operator
    # configuration, 001_…, "The model is told which tools it is not given").
    rounds: list[dict[str, Any]] = field(default_factory=list)


def run_detail(engine: Engine, uuid: str, tables: frozenset[str], *, now: int, window_s: int) -> RunDetail:
    """One run: segments with record entries and step readings, writes with outcomes and history rows.

    The entries are those `runrecord record` rebuilds for the run's conversation (its card outcomes and its
    transcript positions decide them); a run no conversation names gets them from its events alone.
    """
    with reported(engine, "reading the run"), engine.connect() as connection:
        found = runs_by_uuid(connection, [uuid])
        if not found:
            raise RunNotFoundError(uuid)
        run = found[0]
        read = read_events(connection, [run.uid])
        # The page passes only a uuid that matched the uuid pattern (url_state.run_uuid).
        has_conversations = schema.conversation.name in tables
        conversation_uid = conversation_naming_run(connection, uuid) if has_conversations else None
        has_run_outcomes = schema.run_outcome.name in tables
        run_row = stored_outcomes.run_outcome_of(connection, run.uid) if has_run_outcomes else None
        has_write_outcomes = schema.write_outcome.name in tables
        stored = stored_outcomes.write_outcomes_of(connection, run.uid) if has_write_outcomes else {}
    segments = split_segments(read.by_run.get(run.uid, ()))
    entries, cards, problems = _entries(engine, conversation_uid, uuid, segments, run)
    used_window = run_row.window_s if run_row and run_row.window_s else window_s
    rounds = model_rounds(segments)
    asked_in = round_of_steps(rounds)
    views = [_segment_view(s, entries[s.index], cards.get(s.index), asked_in) for s in segments]
    with reported(engine, "reading the run's writes"), engine.connect() as connection:
        writes = write_views(connection, segments, stored, tables, used_window, now)
    if read.problems:
        problems.append(
            plural(
                len(read.problems),
                "event of this run cannot be read and is left out",
                "events of this run cannot be read and are left out",
            )
        )
    last_write = max((w.written_at for w in writes), default=None)
    return RunDetail(
        uid=run.uid,
        uuid=run.uuid,
        configuration=run.configuration_identifier,
        status=run.status,
        ended=ended(run.status, run.termination_reason),
        started_at=run.started_at,
        finished_at=run.finished_at,
        outcome=outcome_label(run_row.outcome) if run_row else observed_later(last_write, now, used_window),
        window_s=used_window,
        conversation=conversation_uid,
        segments=views,
        writes=writes,
        problems=problems,
        rounds=[_round(model_round) for model_round in rounds],
    )


def _entries(
    engine: Engine, conversation_uid: int | None, uuid: str, segments: Sequence[Segment], run: Any
) -> tuple[dict[int, RunRecordEntry], dict[int, CardReading], list[str]]:
    """The run's entry and card reading per segment, and what could not be read.

    The activity list takes a card's answer from the reading its entry was built with (core.run_record
    read_cards: by the card's position and tool), so the two cannot disagree.
    """
    entries: dict[int, RunRecordEntry] = {}
    cards: dict[int, CardReading] = {}
    outcomes: tuple[CardOutcome, ...] = ()
    problems: list[str] = []
    if conversation_uid is not None:
        conversation = load_conversation(engine, conversation_uid)
        outcomes = tuple(o for o in conversation.card_outcomes if o.run_uuid == uuid)
        entries = {e.segment: e for e in rebuild_record(conversation).rebuilt if e.run_uuid == uuid}
        named = next((named for named in conversation.runs if named.uuid == uuid), None)
        if named is not None:
            cards = {i: card for i, card in card_readings(conversation, named).items() if i in entries}
        problems = [p for p in conversation.problems if p.startswith("card_outcomes") or uuid in p]
        problems = [f"its conversation: {p}" for p in problems]  # its uid is for administrators only
    missing = {segment.index for segment in segments if segment.index not in entries}
    if missing:
        built = build_entries(
            uuid, segments, status=run.status, position=0, card_outcomes=outcomes, at=run.started_at
        )
        entries |= {entry.segment: entry for entry in built if entry.segment in missing}
        alone = read_cards(uuid, segments, outcomes, position=0)
        cards |= {index: card for index, card in alone.items() if index in missing}
    return entries, cards, problems


def _segment_view(
    segment: Segment, entry: RunRecordEntry, card: CardReading | None, asked_in: Mapping[int, ModelRound]
) -> SegmentView:
    opening = opening_of(segment)
    previous = SegmentContext(card.answer, card.tool) if card is not None else SegmentContext()
    readings = read_segment(segment, previous=previous)
    steps = [_step(reading, asked_in.get(reading.step.uid), segment.index) for reading in readings]
    return SegmentView(segment.index, OPENED_BY[opening], entry, steps)


def asked_in_round(model_round: ModelRound | None, segment: int) -> str:
    """The model round that asked for a step, numbered as the model-rounds table numbers it; with its segment
    when that is not the step's own (a call that waited for a decision); "—" before the first round."""
    if model_round is None:
        return "—"
    if model_round.segment == segment:
        return str(model_round.round)
    return f"{model_round.round} (segment {model_round.segment})"


def _step(reading: StepReading, model_round: ModelRound | None, segment: int) -> dict[str, Any]:
    shown = reading.label or "(no label: the call ran)"
    if reading.ask_administrator:
        shown += "; asks to have an administrator allow it again"
    if reading.tool in DISPLAY_TOOLS:
        counted = "no (drives the chat's display)"
    elif not reading.in_record:
        counted = "no"
    else:
        counted = "yes, as failed" if reading.failed else "yes"
    return {
        "round": asked_in_round(model_round, segment),
        "tool": reading.tool,
        "ms": float(reading.step.duration_ms),
        "reading": reading.reading.value,
        "activity list shows": shown,
        "in the run record": counted,
    }


def _round(model_round: ModelRound) -> dict[str, Any]:
    missing = set(model_round.not_offered)
    return {
        "segment": model_round.segment,
        "round": model_round.round,
        "offered": list(model_round.offered) if model_round.offered is not None else None,
        "asked for": [
            f"{name} ({NOT_OFFERED})" if name in missing else name for name in model_round.requested
        ],
        "ran": list(model_round.ran),
        "refused without running": list(model_round.refused),
        NOT_OFFERED: ", ".join(model_round.not_offered),
    }
