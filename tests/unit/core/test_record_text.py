"""How `runrecord record` and `runrecord notes` print a conversation, and one entry in a few words."""

from __future__ import annotations

import pytest

from core.notes import Note, NotesResult, Placement
from core.record_diff import DifferenceKind, EntryDifference
from core.record_rebuild import NotesReport, RecordReport
from core.record_text import describe, notes_json, notes_text, record_json, record_text
from core.run_record import (
    Completeness,
    Decision,
    Ended,
    RunRecordEntry,
    ToolUse,
    Undecided,
    UndecidedBy,
    UndecidedKind,
    WrittenRecord,
)
from core.transcript import Role, TranscriptMessage
from tests.unit.core.conversations_helpers import RUN_UUID, a_run, assistant, conversation, user

ENTRY = RunRecordEntry(RUN_UUID, 0, 1, 0, Ended.COMPLETED)


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({}, "nothing ran, was written or decided"),
        (
            {"tools": (ToolUse("read_page", 2, 0), ToolUse("update_page", 1, 1))},
            "tools read_page×2, update_page×1 (1 failed)",
        ),
        (
            {"tools": (ToolUse("", 1, 0),), "waiting": ("",), "decision": Decision("", "Ja")},
            "tools (a tool without a name)×1; waiting: (a tool without a name); "
            "decision: (a tool without a name) Ja",
        ),
        (
            {"writes": (WrittenRecord("pages:5", Completeness.PARTIAL),), "waiting": ("update_page",)},
            "wrote pages:5 (partial); waiting: update_page",
        ),
        (
            {"decision": Decision("update_page", "Übernehmen")},
            "decision: update_page Übernehmen",
        ),
        (
            {"undecided": Undecided(UndecidedKind.CARD, UndecidedBy.NEW_MESSAGE)},
            "left undecided (card, new_message)",
        ),
    ],
)
def test_an_entry_in_words_names_its_tools_writes_waiting_calls_decision_and_what_was_left(
    changes: dict, words: str
) -> None:
    entry = RunRecordEntry(RUN_UUID, 0, 1, 0, Ended.COMPLETED, **changes)

    assert describe(entry) == words


def _report(*, readable: bool, differences: tuple[EntryDifference, ...] = ()) -> RecordReport:
    loaded = conversation(
        messages=[user(0), assistant(1)],
        runs=[a_run()],
        stored=[ENTRY] if readable else [],
        readable=readable,
        problems=["message 3: payload is not JSON"],
    )
    return RecordReport(loaded, (ENTRY,), differences)


def test_the_text_marks_a_rebuilt_entry_the_stored_record_lacks() -> None:
    difference = EntryDifference(RUN_UUID, 0, DifferenceKind.ONLY_REBUILT, (), None, ENTRY)

    text = record_text(_report(readable=True, differences=(difference,)))

    lines = text.splitlines()
    assert lines[0] == "conversation 7: idle, 1 run, 0 card outcomes"
    assert "differences: 1" in lines[1]
    assert any(line.startswith("  +    1 5f0c6e1a   0  completed") for line in lines)
    assert lines[-1] == f"  + run {RUN_UUID[:8]} segment 0: only rebuilt from events"


def test_without_a_readable_stored_record_the_text_says_the_entries_are_rebuilt_only() -> None:
    text = record_text(_report(readable=False))

    assert "stored run record: none readable; 1 entry rebuilt from the runs' events" in text


def test_the_json_has_no_stored_record_when_none_is_readable_and_names_the_problems() -> None:
    printed = record_json(_report(readable=False))

    assert printed["stored"] is None
    assert printed["rebuilt"] == [ENTRY.to_json()]
    assert printed["runs"] == [RUN_UUID]
    assert printed["problems"] == ["message 3: payload is not JSON"]


def _notes(*notes: Note, reason: str | None = None) -> NotesReport:
    loaded = conversation(messages=[user(0), assistant(1), user(2)])
    return NotesReport(loaded, NotesResult(notes, 0, 0, reason), "No page is selected.")


def test_the_notes_text_places_an_added_answer_before_its_message_and_a_note_under_it() -> None:
    added = Note(Placement.SYNTHETIC_ASSISTANT, 2, "[Hinweis: nichts gespeichert]")
    appended = Note(Placement.ASSISTANT, 1, "[Hinweis: pages:5 geschrieben]")

    lines = notes_text(_notes(added, appended)).splitlines()

    assert lines[1] == "page: No page is selected."
    assert lines[2:] == [
        "   0 user: Setze einen neuen Seitentitel.",
        "   1 assistant: Erledigt.",
        "       + [Hinweis: pages:5 geschrieben]",
        "  [assistant, added] [Hinweis: nichts gespeichert]",
        "   2 user: Setze einen neuen Seitentitel.",
    ]


def test_a_conversation_without_notes_says_why_in_text_and_json() -> None:
    report = _notes(reason="This conversation's skill keeps its own transcript.")

    assert notes_text(report).splitlines()[0] == (
        "conversation 7: no notes. This conversation's skill keeps its own transcript."
    )
    assert notes_json(report)["no_notes_reason"] == "This conversation's skill keeps its own transcript."
    assert notes_json(report)["notes"] == []


def test_the_notes_text_shows_a_tool_message_by_its_role_and_never_its_result() -> None:
    loaded = conversation(messages=[user(0), TranscriptMessage(1, Role.TOOL, "SECRET RESULT"), assistant(2)])

    lines = notes_text(NotesReport(loaded, NotesResult((), 0, 0, None), "No page is selected.")).splitlines()

    assert "   1 tool: (a tool's result, not read)" in lines
    assert not any("SECRET" in line for line in lines)
