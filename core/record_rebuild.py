"""The run record rebuilt from a conversation's runs' events beside the stored one, and the notes its next
turn gets (000_…): what `runrecord record`, `runrecord notes` and the dashboard show of a conversation."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from core.conversation import Conversation, Run
from core.events import Segment, split_segments, tool_name
from core.notes import (
    NO_USER_MESSAGE_HELD_REASON,
    NO_USER_MESSAGE_REASON,
    NotesResult,
    NoUserMessageError,
    notes_for_conversation,
    page_prompt_line,
)
from core.record_diff import EntryDifference, diff
from core.refused import Opening, opening_of
from core.run_record import (
    DISPLAY_TOOLS,
    CardReading,
    RunRecordEntry,
    UndecidedBy,
    build_entries,
    read_cards,
)
from core.run_record_json import keep_newest
from core.run_status import RunStatus, is_waiting
from core.transcript import Role


@dataclass(frozen=True)
class RecordReport:
    """The conversation, its record rebuilt from events, and where the stored record differs from it."""

    conversation: Conversation
    rebuilt: tuple[RunRecordEntry, ...]
    differences: tuple[EntryDifference, ...]


@dataclass(frozen=True)
class NotesReport:
    """The conversation, the notes its next turn gets, and the line naming its page."""

    conversation: Conversation
    notes: NotesResult
    page_line: str


def rebuild_record(conversation: Conversation) -> RecordReport:
    """The run record rebuilt from the runs' events, and where it differs from the stored one."""
    rebuilt: list[RunRecordEntry] = []
    for run in conversation.runs:
        rebuilt += _run_entries(conversation, run)
    rebuilt.sort(key=lambda entry: (entry.at, entry.run_uuid, entry.segment))
    entries = keep_newest(rebuilt)
    differences = diff(conversation.stored_entries, entries) if conversation.stored_record_readable else ()
    return RecordReport(conversation, entries, differences)


def card_readings(conversation: Conversation, run: Run) -> dict[int, CardReading]:
    """The cards the run's decisions answered, per continuation, read as the rebuilt record reads them."""
    segments = split_segments(conversation.events.get(run.uuid, ()))
    first, positions = _positions(conversation, run, segments)
    return read_cards(run.uuid, segments, conversation.card_outcomes, position=first, positions=positions)


def next_turn_notes(
    conversation: Conversation, *, own_transcript_skills: Collection[str], last_page_visible: bool
) -> NotesReport:
    """The notes the next turn gets: built from the stored run record and card outcomes, as the chat does;
    none for a conversation whose skill is one of `own_transcript_skills` (the setting of that name). The
    last page is named only when `last_page_visible` (it still exists)."""
    try:
        notes = notes_for_conversation(
            conversation.skill,
            own_transcript_skills,
            conversation.messages,
            conversation.stored_entries,
            conversation.card_outcomes,
        )
    except NoUserMessageError:
        reason = NO_USER_MESSAGE_REASON if conversation.unread_messages else NO_USER_MESSAGE_HELD_REASON
        notes = NotesResult((), 0, 0, no_notes_reason=reason)
    last_page_id = conversation.last_page_id
    visible = last_page_id > 0 and last_page_visible
    return NotesReport(
        conversation, notes, page_prompt_line(conversation.page_id, last_page_id or None, visible)
    )


@dataclass(frozen=True)
class TurnNotes:
    """The notes a turn was given, and the user message that opened the turn."""

    opened_at: int  # the position of the user message the turn answered
    notes: NotesResult


def turn_notes(
    conversation: Conversation, position: int, *, own_transcript_skills: Collection[str]
) -> TurnNotes | None:
    """The notes the turn behind the answer at `position` gets by 000_…'s rule: built from the stored run
    record and card outcomes of the steps before the user message that opened it, placed in the transcript up
    to that message; None when no user message comes before the turn."""
    answer = next((m for m in conversation.messages if m.position == position), None)
    run_uuid = answer.run_uuid if answer is not None else ""
    own = [m.position for m in conversation.messages if run_uuid and m.run_uuid == run_uuid]
    first = min(own, default=position)
    users = [m.position for m in conversation.messages if m.role is Role.USER and m.position < first]
    if not users:
        return None
    opened_at = max(users)
    # A turn is a run of its own (000_…, "Context"): its own steps' entries are not part of what it is given;
    # the steps before it are, a failed step's entry placed at this very user message included.
    notes = notes_for_conversation(
        conversation.skill,
        own_transcript_skills,
        [m for m in conversation.messages if m.position <= opened_at],
        [e for e in conversation.stored_entries if e.position <= opened_at and e.run_uuid != run_uuid],
        [o for o in conversation.card_outcomes if o.position <= opened_at and o.run_uuid != run_uuid],
    )
    return TurnNotes(opened_at, notes)


def _run_entries(conversation: Conversation, run: Run) -> tuple[RunRecordEntry, ...]:
    segments = split_segments(conversation.events.get(run.uuid, ()))
    left_at = _left_for_ai_tasks(conversation, segments)
    if left_at is not None:
        # 000_…, "Decision": a run the editor left with a new message "may still be decided in AI Tasks; the
        # note says that such a later decision is not recorded here": the chat's record ends where it waited.
        answered = opening_of(segments[left_at]) is Opening.INPUT
        run = replace(run, status=RunStatus.WAITING_FOR_INPUT if answered else RunStatus.WAITING_FOR_APPROVAL)
        segments = segments[:left_at]
    first, positions = _positions(conversation, run, segments)
    return build_entries(
        run.uuid,
        segments,
        status=run.status,
        position=first,
        positions=positions,
        card_outcomes=conversation.card_outcomes,
        left_by=_left_by(conversation, run, segments),
        at=run.finished_at or run.started_at,
    )


def _positions(
    conversation: Conversation, run: Run, segments: Sequence[Segment]
) -> tuple[int, dict[int, int]]:
    """The transcript position of the run's turn and of each segment: its answer's, else where it would be."""
    answered = {
        m.segment: m.position
        for m in conversation.messages
        if m.run_uuid == run.uuid and m.segment is not None and m.role is Role.ASSISTANT
    }
    positions = {
        segment.index: answered.get(segment.index, _next_position(conversation, segment.returned_at))
        for segment in segments
    }
    return positions.get(0, _next_position(conversation, run.started_at)), positions


def _next_position(conversation: Conversation, at: int) -> int:
    """Where the answer of a segment that returned at `at` would stand: before the first later message."""
    later = [sorting for sorting, created in conversation.message_times.items() if created > at]
    # After the last message: the next sorting (sortings need not start at 0 or be dense).
    return min(later, default=max(conversation.message_times, default=-1) + 1)


def _left_for_ai_tasks(conversation: Conversation, segments: Sequence[Segment]) -> int | None:
    """The first segment a decision opened after the editor had written a new message while the run waited
    for it: the chat left the run then (a card or question is abandoned by a new message), so the decision
    came from elsewhere (AI Tasks). None when every decision came before the next user message."""
    users = _user_message_times(conversation)
    for index in range(1, len(segments)):
        opener = segments[index].opened_by
        waited_from = segments[index - 1].returned_at
        if opener is not None and any(waited_from < at < opener.crdate for at in users):
            return index
    return None


def _left_by(conversation: Conversation, run: Run, segments: Sequence[Segment]) -> UndecidedBy | None:
    """A waiting run left by a new message of the editor, or a tour's run cancelled by the end of its tour
    (core records a card or question left undecided only when the run waited for one)."""
    if run.status == RunStatus.CANCELLED:
        # 000_…, "Decision": "The run of an ordinary chat is not cancelled"; only a tour's × cancels a run
        # the editor left. A run that never drove a tour's display was cancelled elsewhere (AI Tasks), as it
        # ran, and left nothing undecided. The skill cannot tell: ending the tour clears it (ADR-023).
        return UndecidedBy.TOUR_ENDED if _drove_a_tour(segments) else None
    if is_waiting(run.status):
        returned_at = segments[-1].returned_at if segments else run.started_at
        later_user = any(at > returned_at for at in _user_message_times(conversation))
        return UndecidedBy.NEW_MESSAGE if later_user else None
    return None


def _user_message_times(conversation: Conversation) -> list[int]:
    """When each of the editor's messages was written (0 where its time cannot be read)."""
    times = conversation.message_times
    return [times.get(m.position, 0) for m in conversation.messages if m.role is Role.USER]


def _drove_a_tour(segments: Sequence[Segment]) -> bool:
    """The run called one of the chat's tools that drive a tour's display (DOMAIN.md, "Cards, questions,
    tours")."""
    return any(tool_name(step) in DISPLAY_TOOLS for segment in segments for step in segment.tool_steps)
