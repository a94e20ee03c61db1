"""Notes for a later turn: what the run record and the card outcomes say, placed in the transcript (000_…).

A turn is a run of its own and gets the transcript's text and nothing else (000_…, "Context"). Each turn
therefore builds notes from the run record and the card outcomes, as the chat's words, and places each in
the message of the segment it describes (000_…, "The record goes to the turn it belongs to"). The notes are
never stored; `notes_for_turn` returns them with where they go, and the caller puts them into the prompt.

`notes_for_conversation` withholds the notes of a conversation whose skill keeps a transcript of its own
(000_…, "Consequences"). `page_prompt_line` is the line for the page of a turn (000_…, "A turn sent without a
page keeps the conversation's last page apart from the selection").
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum

from core.cards import APPROVE_ANSWER, DECLINE_ANSWERS, CardDecision, CardOutcome
from core.error_codes import Notice
from core.events import identifier
from core.run_record import Ended, RunRecordEntry, UndecidedBy, UndecidedKind
from core.transcript import Role, TranscriptMessage

__all__ = [
    "FLAGGED_ANSWER",
    "LIST_LIMIT",
    "MAX_CHARS",
    "MAX_NOTES",
    "MIN_CHARS",
    "NOTE_LABEL",
    "OWN_TRANSCRIPT_REASON",
    "Note",
    "NotesResult",
    "NO_USER_MESSAGE_HELD_REASON",
    "NO_USER_MESSAGE_REASON",
    "NoUserMessageError",
    "Placement",
    "describe_card_outcome",
    "describe_entry",
    "is_empty_step",
    "labelled",
    "no_notes_reason",
    "notes_for_conversation",
    "notes_for_turn",
    "older_notes_statement",
    "page_prompt_line",
]

# 000_…, "The record goes to the turn it belongs to": the label of every note, in the user message as well.
# The note's text goes where "…" stands.
NOTE_LABEL = "[Chat record — written by the chat from the run, not by the assistant: …]"
_LABEL_HEAD, _LABEL_TAIL = NOTE_LABEL.split("…")
_LABEL_CHARS = len(_LABEL_HEAD) + len(_LABEL_TAIL)

# 000_…, same section: "At most 40 notes and 6000 characters are sent." A note's characters are its full
# text, label included: that is what the prompt carries.
MAX_NOTES = 40
MAX_CHARS = 6000

# The smallest character budget that still holds the older-notes statement on its own, so that a dropped
# note is always announced (000_…: "rather than letting the gap read as 'nothing happened'").
MIN_CHARS = 300

# A segment can name many tools or records (an import writes hundreds); a list longer than this ends in
# "and N more", so that one note cannot take the whole budget while the count stays true.
LIST_LIMIT = 12

# 000_…, "The note beside a flagged answer is scoped to its step (amends ADR-017)": a flagged answer that
# sums up what earlier steps saved must not be read as "those saves never happened". 001_…, "Decision":
# "the run behind this answer wrote no record".
FLAGGED_ANSWER = (
    "The run step behind this answer wrote no record: a change this answer describes as done in this step "
    "was not saved. What earlier steps saved is in the chat records."
)

# What the answer of a run-record decision means, by the card's answers (core.cards; 000_…, amendment, table);
# "freigegeben" is the run record's answer for an approval no card outcome names (000_…, "Decision": "where no
# card outcome already says it"). A card outcome's note reads its own decision, never its answer's wording.
_APPROVED_WITHOUT_OUTCOME = "freigegeben"
_ANSWER_MEANING: dict[str, str] = {
    APPROVE_ANSWER: "approved",
    _APPROVED_WITHOUT_OUTCOME: "approved",
    **dict.fromkeys(DECLINE_ANSWERS, "declined"),
}

_ENDED: dict[Ended, str] = {
    Ended.COMPLETED: "completed",
    Ended.WAITING: "waited for a decision",
    Ended.FAILED: "failed",
    Ended.CANCELLED: "was cancelled",
    # 000_…, "Decision": unknown when the turn failed before nr-llm returned its steps.
    Ended.UNKNOWN: "how it ended is unknown (the run returned no steps), so what ran is not known",
}

_UNDECIDED_BY: dict[UndecidedBy, str] = {
    UndecidedBy.NEW_MESSAGE: "wrote a new message",
    UndecidedBy.TOUR_ENDED: "ended the tour",
}
_LEFT: dict[UndecidedKind, str] = {
    UndecidedKind.CARD: "left the card undecided",
    UndecidedKind.QUESTION: "left the question unanswered",
}

# 000_…, "Consequences": "A conversation about a missing alt text (ADR-026) replaces the transcript with its
# own and gets no notes: its write is confirmed in the transcript already." Which skills do so is configured;
# the skill's identifier goes where {skill} stands.
OWN_TRANSCRIPT_REASON = (
    "This conversation gets no notes: its skill ({skill}) replaces the transcript with its own, and that "
    "transcript confirms the write already."
)
_NOT_PLACED = (
    "This conversation's notes cannot be placed: they would open or close the transcript, which goes into a "
    "user message, and "
)
NO_USER_MESSAGE_REASON = _NOT_PLACED + "no user message of the conversation could be read."
NO_USER_MESSAGE_HELD_REASON = _NOT_PLACED + "the conversation holds no user message."

_NOT_RECORD = re.compile(r"[^A-Za-z0-9_:]")
_NOT_SKILL = re.compile(r"[^A-Za-z0-9_.:-]")  # skill identifiers also use "-" and "." ("seo-check")
_NOT_ANSWER = re.compile(r"[^\w -]")
_ANSWER_LENGTH = 40


class Placement(StrEnum):
    """Where a note goes: the answer at `position`, an answer of its own, or the user message at `position`.

    A synthetic assistant message at `position` goes after every message before `position` and before the
    message that holds `position`, if any.
    """

    ASSISTANT = "assistant"
    SYNTHETIC_ASSISTANT = "synthetic_assistant"
    USER = "user"


@dataclass(frozen=True)
class Note:
    placement: Placement
    position: int
    text: str  # the full text, label included


@dataclass(frozen=True)
class NotesResult:
    notes: tuple[Note, ...]  # in transcript order
    dropped_count: int
    dropped_chars: int  # the full texts of the dropped notes
    no_notes_reason: str | None = None  # why the conversation gets no notes at all; None when it gets them


class NoUserMessageError(ValueError):
    """Notes that would open or close the transcript need a user message to go into (000_…)."""


def labelled(text: str) -> str:
    """A note's full text: its words inside NOTE_LABEL, where "…" stands."""
    return f"{_LABEL_HEAD}{text}{_LABEL_TAIL}"


def describe_entry(entry: RunRecordEntry) -> str:
    """An entry in plain words: how the step ended, the decision, tools, writes, what was left undecided."""
    step = "The turn" if entry.segment == 0 else f"Continuation {entry.segment} of the turn"
    ended = _ENDED[entry.ended]
    if entry.ended is Ended.WAITING and entry.waiting:
        ended += " on " + _listed([identifier(name) for name in entry.waiting])
    sentences = [f"{step}: {ended}."]
    if entry.decision is not None:
        tool = identifier(entry.decision.tool)
        card = f"the card for {tool}" if tool else "the card"
        sentences.append(f"Answer on {card}: {_answer(entry.decision.answer)}.")
    known = entry.ended is not Ended.UNKNOWN
    if entry.tools:
        used = [_tool_use(tool.name, tool.calls, tool.failed) for tool in entry.tools]
        sentences.append("Tools that ran: " + _listed(used) + ".")
    elif known:
        sentences.append("No tool ran.")
    if entry.writes:
        written = [f"{_record(w.record)} ({w.completeness.value})" for w in entry.writes]
        sentences.append("Records written: " + _listed(written) + ".")
    elif known:
        sentences.append("Nothing was written.")
    if entry.undecided is not None:
        sentences.append(
            f"The editor {_LEFT[entry.undecided.kind]} and {_UNDECIDED_BY[entry.undecided.by]}: "
            "nothing from it was saved in the chat."
        )
        # 000_…, "Decision": the run of an ordinary chat is not cancelled by a new message; a tour's end
        # cancels it.
        if entry.undecided.by is UndecidedBy.NEW_MESSAGE:
            sentences.append(
                "The run was not cancelled and may still be decided in AI Tasks; such a later decision is "
                "not recorded here."
            )
    return " ".join(sentences)


def describe_card_outcome(outcome: CardOutcome) -> str:
    """What a card outcome says: the card's tool, record and field names, and the editor's answer."""
    tool = identifier(outcome.tool)
    card = f"Card for {tool}" if tool else "Card"
    record = _record(outcome.record)
    if record:
        card += f" on {record}"
    fields = [identifier(name) for name in outcome.fields]
    if any(fields):
        card += " (fields " + _listed([name for name in fields if name]) + ")"
    meaning = "approved" if outcome.decision is CardDecision.APPROVED else "declined"
    answer = _clean_answer(outcome.answer)
    text = f"{card}: the editor " + (f"answered {answer} ({meaning})" if answer else f"{meaning} it")
    if outcome.decision is CardDecision.DECLINED:
        # A declined card's calls are refused by nr-llm (000_…, amendment, table): nothing of it was written.
        text += "; its change was not saved"
    return text + "."


def is_empty_step(entry: RunRecordEntry) -> bool:
    """A step in which nothing ran, nothing was written and nothing was decided; its note is dropped first."""
    # 000_…, "The record goes to the turn it belongs to", read literally: a card or question the editor left
    # undecided is nothing decided, so its step is empty and its note goes first over the budget.
    return not entry.tools and not entry.writes and entry.decision is None


def older_notes_statement(dropped: int) -> str:
    """The words the first note starts with when `dropped` notes were left out of the budget (000_…)."""
    notes = "note" if dropped == 1 else "notes"
    return (
        f"Older notes exist and cannot be read in this turn ({dropped} {notes} left out); "
        "a step without a note here is not a step in which nothing happened."
    )


@dataclass(frozen=True, slots=True)
class _Candidate:
    happened: tuple[int, int, int, int]  # position, outcomes before, kind, index: the order things happened
    placement: Placement
    position: int
    words: str
    empty_step: bool
    chars: int  # the full text's length, label included


def _candidate(
    happened: tuple[int, int, int, int], placed: tuple[Placement, int], words: str, empty_step: bool
) -> _Candidate:
    return _Candidate(happened, placed[0], placed[1], words, empty_step, _LABEL_CHARS + len(words))


# Kinds of note at one position: an entry before the outcome of the card its segment showed, and the note of
# a flagged answer last, since it is appended to the answer itself (001_…, "Decision").
_ENTRY, _OUTCOME, _FLAGGED = 0, 1, 2


def notes_for_turn(
    messages: Sequence[TranscriptMessage],
    entries: Sequence[RunRecordEntry],
    card_outcomes: Sequence[CardOutcome],
    *,
    max_notes: int = MAX_NOTES,
    max_chars: int = MAX_CHARS,
) -> NotesResult:
    """One note per entry, card outcome and flagged answer, placed by segment, within the budget (000_…)."""
    if max_notes < 1 or max_chars < MIN_CHARS:
        raise ValueError(f"the budget must hold at least one note of {MIN_CHARS} characters")
    placer = _Placer(messages)
    candidates = [
        _candidate(
            (entry.position, entry.card_outcomes_before, _ENTRY, index),
            placer.place(entry.position, entry.run_uuid, entry.segment),
            describe_entry(entry),
            is_empty_step(entry),
        )
        for index, entry in enumerate(entries)
    ]
    candidates += [
        _candidate(
            (outcome.position, index, _OUTCOME, index),
            placer.place(outcome.position, outcome.run_uuid, None),
            describe_card_outcome(outcome),
            False,
        )
        for index, outcome in enumerate(card_outcomes)
    ]
    candidates += [
        _candidate(
            (message.position, sys.maxsize, _FLAGGED, message.position),
            (Placement.ASSISTANT, message.position),
            FLAGGED_ANSWER,
            False,
        )
        for message in messages
        if message.role is Role.ASSISTANT and message.notice is Notice.NOTHING_SAVED
    ]
    if not candidates:
        return NotesResult((), 0, 0)
    if placer.needs_user and not placer.has_user:
        raise NoUserMessageError("a note opens or closes the transcript, and no user message holds it")
    return _within_budget(candidates, max_notes, max_chars)


def no_notes_reason(skill: str, own_transcript_skills: Collection[str]) -> str | None:
    """Why a conversation gets no notes: its skill keeps its own transcript (000_…); None if it gets them."""
    name = skill.strip()
    if not name or name not in own_transcript_skills:
        return None
    return OWN_TRANSCRIPT_REASON.format(skill=_NOT_SKILL.sub("", name) or "unnamed")


def notes_for_conversation(
    skill: str,
    own_transcript_skills: Collection[str],
    messages: Sequence[TranscriptMessage],
    entries: Sequence[RunRecordEntry],
    card_outcomes: Sequence[CardOutcome],
    *,
    max_notes: int = MAX_NOTES,
    max_chars: int = MAX_CHARS,
) -> NotesResult:
    """The notes of the next turn; none, with the reason, when the skill's transcript is its own (000_…)."""
    reason = no_notes_reason(skill, own_transcript_skills)
    if reason is not None:
        return NotesResult((), 0, 0, no_notes_reason=reason)
    return notes_for_turn(messages, entries, card_outcomes, max_notes=max_notes, max_chars=max_chars)


def _within_budget(candidates: list[_Candidate], max_notes: int, max_chars: int) -> NotesResult:
    by_time = sorted(candidates, key=lambda candidate: candidate.happened)
    happened_rank = {id(candidate): rank for rank, candidate in enumerate(by_time)}
    in_transcript = sorted(
        candidates,
        key=lambda candidate: (
            candidate.position,
            candidate.placement is not Placement.SYNTHETIC_ASSISTANT,
            happened_rank[id(candidate)],
        ),
    )
    # 000_…: "notes of steps in which nothing ran, nothing was written and nothing was decided are left out
    # first, then the oldest".
    drop_order = [candidate for candidate in by_time if candidate.empty_step]
    drop_order += [candidate for candidate in by_time if not candidate.empty_step]
    kept = len(candidates)
    chars = sum(candidate.chars for candidate in candidates)
    dropped: set[int] = set()
    dropped_chars = 0
    while not _fits(kept, chars, len(dropped), max_notes, max_chars):
        candidate = drop_order[len(dropped)]
        dropped.add(id(candidate))
        kept -= 1
        chars -= candidate.chars
        dropped_chars += candidate.chars
    remaining = [candidate for candidate in in_transcript if id(candidate) not in dropped]
    notes = [Note(one.placement, one.position, labelled(one.words)) for one in remaining]
    if dropped:
        statement = older_notes_statement(len(dropped))
        if remaining:
            first = remaining[0]
            notes[0] = Note(first.placement, first.position, labelled(f"{statement} {first.words}"))
        else:
            # Every note was too long for the budget: the statement stands where the first one would have.
            first = in_transcript[0]
            notes = [Note(first.placement, first.position, labelled(statement))]
    return NotesResult(tuple(notes), len(dropped), dropped_chars)


def _fits(kept: int, chars: int, dropped: int, max_notes: int, max_chars: int) -> bool:
    if dropped == 0:
        return kept <= max_notes and chars <= max_chars
    statement = len(older_notes_statement(dropped))
    if kept == 0:
        # MIN_CHARS holds the statement as a note of its own.
        return True
    # The statement opens the first note that is kept: its words and a space count against the budget too.
    return kept <= max_notes and chars + statement + 1 <= max_chars


class _Placer:
    """Where a note goes: its segment's answer, a synthetic answer between two messages, or a user message."""

    def __init__(self, messages: Sequence[TranscriptMessage]) -> None:
        ordered = sorted(messages, key=lambda message: message.position)
        self._by_segment: dict[tuple[str, int], int] = {}
        self._assistant_at: dict[int, tuple[str, int | None]] = {}
        for message in ordered:
            if message.role is not Role.ASSISTANT:
                continue
            self._assistant_at.setdefault(message.position, (message.run_uuid, message.segment))
            if message.run_uuid and message.segment is not None:
                self._by_segment.setdefault((message.run_uuid, message.segment), message.position)
        users = [message.position for message in ordered if message.role is Role.USER]
        self.has_user = bool(users)
        self._first_user = users[0] if users else 0
        self._last_user = users[-1] if users else 0
        self._first = ordered[0].position if ordered else 0
        self._last = ordered[-1].position if ordered else -1
        self._empty = not ordered
        self.needs_user = False

    def place(self, position: int, run_uuid: str, segment: int | None) -> tuple[Placement, int]:
        if segment is not None and (run_uuid, segment) in self._by_segment:
            return Placement.ASSISTANT, self._by_segment[(run_uuid, segment)]
        answer_run, answer_segment = self._assistant_at.get(position, (None, None))
        # An answer of the same run at the segment's position: a later segment that joined its text to the
        # answer of an earlier one, or a message stored before messages carried runUuid. Not the answer of
        # a later segment: an earlier one without an answer gets a message of its own before it (000_…).
        joined = answer_segment is None or segment is None or answer_segment <= segment
        if answer_run is not None and (not answer_run or not run_uuid or answer_run == run_uuid) and joined:
            return Placement.ASSISTANT, position
        # 000_…: "The model is called on a user turn, so a note that would open or close the transcript …
        # goes into that user message instead".
        if self._empty or position <= self._first:
            self.needs_user = True
            return Placement.USER, self._first_user
        if position > self._last:
            self.needs_user = True
            return Placement.USER, self._last_user
        # A segment without an answer gets an assistant message of its own, before the message that now
        # holds its position and after every message before it.
        return Placement.SYNTHETIC_ASSISTANT, position


def page_prompt_line(page_id: int, last_page_id: int | None, reader_may_see_last_page: bool) -> str:
    """The selected page; without one, the last page apart from the selection, named only if visible."""
    if page_id > 0:
        return f"The selected page is page {page_id}."
    if last_page_id is None or last_page_id <= 0:
        return "No page is selected."
    # 000_…, "A turn sent without a page keeps the conversation's last page apart from the selection": the
    # page is named only when the user may see it, as the selected page is.
    last = (
        f"The page last selected in this conversation was page {last_page_id}."
        if reader_may_see_last_page
        else "A page was selected earlier in this conversation."
    )
    return (
        f"No page is selected now. {last} The transcript and the chat records say which pages earlier steps "
        "worked on. Ask before new work on a page the user does not refer to."
    )


def _listed(items: Sequence[str]) -> str:
    if len(items) <= LIST_LIMIT:
        return ", ".join(items)
    return ", ".join(items[:LIST_LIMIT]) + f" and {len(items) - LIST_LIMIT} more"


def _tool_use(name: str, calls: int, failed: int) -> str:
    counted = f"{calls} call" if calls == 1 else f"{calls} calls"
    if failed:
        counted += f", {failed} failed"
    return f"{identifier(name)} ({counted})"


def _record(record: str) -> str:
    # 000_…, "Decision": "Every identifier is reduced to the characters identifiers use."
    return _NOT_RECORD.sub("", record)


def _clean_answer(answer: str) -> str:
    # Answers are the card's own labels; anything else is cut to words, so it cannot close the label.
    return " ".join(_NOT_ANSWER.sub("", answer).split())[:_ANSWER_LENGTH]


def _answer(answer: str) -> str:
    cleaned = _clean_answer(answer)
    meaning = _ANSWER_MEANING.get(cleaned)
    if not cleaned:
        return "unknown"
    return f"{cleaned} ({meaning})" if meaning else cleaned
