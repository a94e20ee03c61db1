"""runrecord's readings of a conversation's answers in words, as the Conversation page marks them: an
unwritten claim, a notice the recomputation does not give, a denial of recorded writes and its segments, what
cannot be told, and the notes a turn was given (core.answer_readings, core.record_rebuild.turn_notes)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from core.answer_readings import AnswerReading, NoticeReading
from core.answers import ClaimState, DenialState
from core.record_rebuild import TurnNotes
from core.run_record import RunRecordEntry


@dataclass(frozen=True)
class Mark:
    """runrecord's reading beside a message: how loud it is and what it says."""

    level: str  # "error", "warning", "info"
    text: str


# What a stored notice the recomputation does not give rests on, by the recomputed claim.
UNFOUNDED_BECAUSE = {
    ClaimState.NO_CLAIM: "the answer has no claim word that is not negated (ADR-017's claim rule)",
    ClaimState.WROTE: "its run wrote",
}


def answer_marks(reading: AnswerReading) -> tuple[Mark, ...]:
    """An answer's reading in words: an unwritten claim, a notice the recomputation does not give, a denial
    of recorded writes (how many, and of which segments), or what cannot be told."""
    marks: list[Mark] = []
    if reading.claim is ClaimState.NOTHING_SAVED:
        stored = (
            "The chat stored the nothingSaved notice."
            if reading.notice_stored
            else "The chat stored no nothingSaved notice for it."
        )
        marks.append(Mark("error", f"Claims a change its run did not write. {stored}"))
    elif reading.claim is ClaimState.CANNOT_TELL:
        marks.append(
            Mark(
                "info",
                "Claims a change; whether its run wrote cannot be told (its events are missing or "
                "unreadable).",
            )
        )
    if reading.notice is NoticeReading.UNFOUNDED:
        because = UNFOUNDED_BECAUSE.get(reading.claim, "")
        marks.append(
            Mark(
                "warning",
                "The chat's nothingSaved notice disagrees with the recomputation, which gives none: "
                f"{because}.",
            )
        )
    if reading.denial is DenialState.DENIES:
        count = reading.denied_writes
        writes = "1 recorded write" if count == 1 else f"{count} recorded writes"
        marks.append(Mark("error", f"Denies {writes}: {denied_segments(reading.denied)}."))
    elif reading.denial is DenialState.CANNOT_TELL:
        marks.append(
            Mark(
                "info",
                "Whether it denies earlier writes cannot be told: the stored run record cannot be read.",
            )
        )
    return tuple(marks)


# The kinds of mark the summary line counts: its words for one answer and for several, the rest of its words,
# and which readings carry it.
SUMMARY: tuple[tuple[str, str, str, Callable[[AnswerReading], bool]], ...] = (
    (
        "claims a change its run",
        "claim a change their run",
        "did not write",
        lambda reading: reading.claim is ClaimState.NOTHING_SAVED,
    ),
    (
        "carries a nothingSaved notice",
        "carry a nothingSaved notice",
        "the recomputation does not give",
        lambda reading: reading.notice is NoticeReading.UNFOUNDED,
    ),
    ("denies", "deny", "recorded writes", lambda reading: reading.denial is DenialState.DENIES),
    # What cannot be told is said too: without it the line would read as a clean verdict above an answer
    # marked "cannot be told" in place.
    (
        "claims a change",
        "claim a change",
        "whose writing cannot be told",
        lambda reading: reading.claim is ClaimState.CANNOT_TELL,
    ),
    (
        "cannot be told to deny",
        "cannot be told to deny",
        "recorded writes or not",
        lambda reading: reading.denial is DenialState.CANNOT_TELL,
    ),
)


def readings_summary(readings: Collection[AnswerReading]) -> list[str]:
    """One line per kind of mark the completed answers carry, with the answers' positions; none when no
    answer is marked."""
    lines = []
    for one, several, rest, marked in SUMMARY:
        positions = sorted(reading.position for reading in readings if marked(reading))
        if positions:
            count = f"1 answer {one}" if len(positions) == 1 else f"{len(positions)} answers {several}"
            at = ", ".join(str(position) for position in positions)
            lines.append(f"{count} {rest} (position {at})")
    return lines


def denied_segments(entries: Sequence[RunRecordEntry]) -> str:
    """The segments whose writes are denied, per run: "run cd613e30 continuations 1, 2 (pages:1)"."""
    by_run: dict[str, list[RunRecordEntry]] = {}
    for entry in entries:
        by_run.setdefault(entry.run_uuid, []).append(entry)
    parts = []
    for run_uuid, run_entries in by_run.items():
        segments = sorted({entry.segment for entry in run_entries})
        records = dict.fromkeys(write.record for entry in run_entries for write in entry.writes)
        parts.append(f"run {run_uuid[:8]} {_segments(segments)} ({', '.join(records)})")
    return "; ".join(parts)


def _segments(numbers: Sequence[int]) -> str:
    named = ["turn"] if 0 in numbers else []
    continuations = [str(number) for number in numbers if number]
    if continuations:
        word = "continuation" if len(continuations) == 1 else "continuations"
        named.append(f"{word} {', '.join(continuations)}")
    return " and ".join(named)


def step_name(segment: int) -> str:
    """A run segment as the pages name it: the turn, or its continuation N."""
    return "turn" if segment == 0 else f"continuation {segment}"


def given_mark(turn: TurnNotes) -> Mark:
    """How many notes the turn behind an answer was given, and what the budget dropped."""
    notes = turn.notes
    if notes.no_notes_reason is not None:
        return Mark("info", f"The turn behind this answer was given no notes: {notes.no_notes_reason}")
    count = len(notes.notes)
    given = "no notes" if count == 0 else ("1 note" if count == 1 else f"{count} notes")
    text = (
        f"The turn behind this answer (opened by the message at position {turn.opened_at}) was given {given} "
        "by ADR-030's rule, from the run record and card outcomes stored before it"
    )
    if notes.dropped_count:
        text += f"; the budget dropped {notes.dropped_count}"
    return Mark("info", text + ".")
