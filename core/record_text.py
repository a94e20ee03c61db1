"""How `runrecord record` and `runrecord notes` print what they found, as plain text or JSON, and one
run-record entry in a few words (the dashboard's Conversation and Run pages show entries so too)."""

from __future__ import annotations

from typing import Any

from core.formatting import plural
from core.notes import Note, Placement
from core.record_diff import DifferenceKind
from core.record_rebuild import NotesReport, RecordReport
from core.run_record import RunRecordEntry
from core.transcript import Role

TOOL_RESULT_NOT_READ = "(a tool's result, not read)"
MARKS = {DifferenceKind.ONLY_STORED: "-", DifferenceKind.ONLY_REBUILT: "+", DifferenceKind.CHANGED: "≠"}


def record_json(report: RecordReport) -> dict[str, Any]:
    """Both records in the stored column's JSON shape (DESIGN.md), with the differences and problems."""
    conversation = report.conversation
    return {
        "conversation": conversation.uid,
        "status": conversation.status,
        "runs": [run.uuid for run in conversation.runs],
        "stored": [entry.to_json() for entry in conversation.stored_entries]
        if conversation.stored_record_readable
        else None,
        "rebuilt": [entry.to_json() for entry in report.rebuilt],
        "differences": [
            {
                "runUuid": difference.run_uuid,
                "segment": difference.segment,
                "kind": difference.kind.value,
                "fields": list(difference.fields),
            }
            for difference in report.differences
        ],
        "problems": list(conversation.problems),
    }


def record_text(report: RecordReport) -> str:
    """The rebuilt entries one a line, each marked where the stored record differs."""
    conversation = report.conversation
    lines = [
        f"conversation {conversation.uid}: {conversation.status}, {plural(len(conversation.runs), 'run')}, "
        f"{plural(len(conversation.card_outcomes), 'card outcome')}",
    ]
    if not conversation.stored_record_readable:
        lines.append(
            f"stored run record: none readable; {plural(len(report.rebuilt), 'entry', 'entries')} rebuilt "
            "from the runs' events"
        )
    else:
        lines.append(
            f"stored run record: {plural(len(conversation.stored_entries), 'entry', 'entries')}; rebuilt "
            f"from events: {len(report.rebuilt)}; differences: {len(report.differences) or 'none'}"
        )
    marks = {(d.run_uuid, d.segment): MARKS[d.kind] for d in report.differences}
    lines.append(f"  {'':1} {'pos':>4} {'run':8} {'seg':>3}  {'ended':9} what")
    for entry in report.rebuilt:
        mark = marks.get((entry.run_uuid, entry.segment), " ")
        lines.append(
            f"  {mark} {entry.position:>4} {entry.run_uuid[:8]:8} {entry.segment:>3}  "
            f"{entry.ended.value:9} {describe(entry)}"
        )
    present = {run.uuid for run in conversation.runs}
    for difference in report.differences:
        label = {"only_stored": "only in the stored record", "only_rebuilt": "only rebuilt from events"}
        what = label.get(difference.kind.value, "differs in " + ", ".join(difference.fields))
        if difference.kind is DifferenceKind.ONLY_STORED and difference.run_uuid not in present:
            # DOMAIN.md, "Retention": nr-llm purges a finished run with its events after its window.
            what += " (its run is not in tx_nrllm_agentrun, whose retention purge removes old runs)"
        unread = conversation.unreadable_events.get(difference.run_uuid, 0)
        if unread:
            # An approval or input that cannot be read splits the run's segments elsewhere than the chat did.
            what += (
                f" ({plural(unread, 'event')} of its run cannot be read: the rebuilt entries may be wrong)"
            )
        line = (
            f"  {MARKS[difference.kind]} run {difference.run_uuid[:8]} segment {difference.segment}: {what}"
        )
        if difference.stored is not None and difference.rebuilt is not None:
            stored, rebuilt = difference.stored.to_json(), difference.rebuilt.to_json()
            line += "".join(f"; {f}: stored {stored[f]} rebuilt {rebuilt[f]}" for f in difference.fields)
        lines.append(line)
    return "\n".join(lines)


def describe(entry: RunRecordEntry) -> str:
    """One entry in a few words: tools, records written, waiting calls, the decision, what was left."""
    parts = []
    if entry.tools:
        parts.append(
            "tools "
            + ", ".join(
                f"{_named(t.name)}×{t.calls}" + (f" ({t.failed} failed)" if t.failed else "")
                for t in entry.tools
            )
        )
    if entry.writes:
        parts.append("wrote " + ", ".join(f"{w.record} ({w.completeness.value})" for w in entry.writes))
    if entry.waiting:
        parts.append("waiting: " + ", ".join(_named(name) for name in entry.waiting))
    if entry.decision is not None:
        parts.append(f"decision: {_named(entry.decision.tool)} {entry.decision.answer}")
    if entry.undecided is not None:
        parts.append(f"left undecided ({entry.undecided.kind.value}, {entry.undecided.by.value})")
    return "; ".join(parts) or "nothing ran, was written or decided"


def _named(tool: str) -> str:
    # A step whose toolName is no string, or holds no identifier character, names its tool "" in the record
    # (core.events.tool_name); the text says so rather than print nothing.
    return tool or "(a tool without a name)"


def notes_json(report: NotesReport) -> dict[str, Any]:
    """The notes exactly as the next turn gets them, and what the budget dropped."""
    return {
        "conversation": report.conversation.uid,
        "notes": [
            {"placement": note.placement.value, "position": note.position, "text": note.text}
            for note in report.notes.notes
        ],
        "no_notes_reason": report.notes.no_notes_reason,
        "dropped": {"count": report.notes.dropped_count, "chars": report.notes.dropped_chars},
        "pagePrompt": report.page_line,
        "problems": list(report.conversation.problems),
    }


def notes_text(report: NotesReport) -> str:
    """The transcript as the next turn reads it: each message, with the notes placed in and between them."""
    notes = report.notes
    by_position: dict[int, list[Note]] = {}
    for note in notes.notes:
        by_position.setdefault(note.position, []).append(note)
    if notes.no_notes_reason is not None:
        head = f"conversation {report.conversation.uid}: no notes. {notes.no_notes_reason}"
    else:
        head = (
            f"conversation {report.conversation.uid}: {plural(len(notes.notes), 'note')}, "
            f"{plural(sum(len(n.text) for n in notes.notes), 'character')}; dropped by the budget: "
            f"{plural(notes.dropped_count, 'note')}, {plural(notes.dropped_chars, 'character')}"
        )
    lines = [head, f"page: {report.page_line}"]
    placed: set[int] = set()
    for message in report.conversation.messages:
        here = by_position.get(message.position, [])
        for note in here:
            if note.placement is Placement.SYNTHETIC_ASSISTANT:
                lines.append(f"  [assistant, added] {note.text}")
        shown = TOOL_RESULT_NOT_READ if message.role is Role.TOOL else _short(message.content)
        lines.append(f"{message.position:>4} {message.role.value}: {shown}")
        lines += [
            f"       + {note.text}" for note in here if note.placement is not Placement.SYNTHETIC_ASSISTANT
        ]
        placed.add(message.position)
    for position, rest in sorted(by_position.items()):
        if position not in placed:
            lines += [f"  [assistant, added] {note.text}" for note in rest]
    return "\n".join(lines)


def _short(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
