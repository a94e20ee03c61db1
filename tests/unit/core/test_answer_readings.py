"""runrecord's reading of each completed answer of a conversation: the claim its run did not write, the
stored notice against the recomputation, the denial of recorded writes (001_…, 000_…)."""

from __future__ import annotations

from core.answer_readings import NoticeReading, read_answers
from core.answers import ClaimState, DenialState
from core.error_codes import Notice
from core.run_record import Completeness, Ended, RunRecordEntry, WrittenRecord
from core.transcript import Role, TranscriptMessage
from tests.unit.core.conversations_helpers import RUN_UUID, a_run, assistant, conversation, user
from tests.unit.core.events_helpers import llm, run, tool, tool_write

TOUR = "5f0c6e1a-2222-4c4c-9a9a-000000000002"
READ_ONLY = run(llm(["get_page"]), tool("get_page"), llm())
WROTE = run(llm(["update_page"]), tool("update_page"), tool_write("pages", 5, "complete"), llm())
DENIAL = "Hier wurde nichts geprüft oder geändert, die SEO-Tour hat nicht stattgefunden."


def _flagged(position: int, text: str) -> TranscriptMessage:
    return TranscriptMessage(
        position, Role.ASSISTANT, text, Notice.NOTHING_SAVED, run_uuid=RUN_UUID, segment=0
    )


def _written(segment: int, position: int) -> RunRecordEntry:
    written = (WrittenRecord("pages:1", Completeness.COMPLETE),)
    return RunRecordEntry(TOUR, segment, position, 0, Ended.COMPLETED, writes=written)


def test_an_answer_claiming_a_change_its_run_did_not_write_reads_unwritten_though_no_notice_is_stored() -> (
    None
):
    loaded = conversation(
        messages=[user(0), assistant(1, "Der Seitentitel wurde aktualisiert und gespeichert.")],
        runs=[a_run()],
        events={RUN_UUID: READ_ONLY},
    )

    (reading,) = read_answers(loaded)

    assert (reading.position, reading.claim) == (1, ClaimState.NOTHING_SAVED)
    assert not reading.notice_stored and reading.notice is NoticeReading.MISSING


def test_a_stored_notice_on_an_answer_without_a_claim_word_disagrees_with_the_recomputation() -> None:
    loaded = conversation(
        messages=[user(0), _flagged(1, "Fertig, die Seite ist jetzt live.")],
        runs=[a_run()],
        events={RUN_UUID: READ_ONLY},
    )

    (reading,) = read_answers(loaded)

    assert reading.claim is ClaimState.NO_CLAIM and reading.notice is NoticeReading.UNFOUNDED


def test_a_stored_notice_on_an_answer_whose_run_wrote_disagrees_with_the_recomputation() -> None:
    loaded = conversation(
        messages=[user(0), _flagged(1, "Erledigt, der Titel ist gespeichert.")],
        runs=[a_run()],
        events={RUN_UUID: WROTE},
    )

    (reading,) = read_answers(loaded)

    assert reading.claim is ClaimState.WROTE and reading.notice is NoticeReading.UNFOUNDED


def test_a_stored_notice_on_an_unwritten_claim_agrees() -> None:
    loaded = conversation(
        messages=[user(0), _flagged(1, "Erledigt, der Titel ist gespeichert.")],
        runs=[a_run()],
        events={RUN_UUID: READ_ONLY},
    )

    (reading,) = read_answers(loaded)

    assert reading.claim is ClaimState.NOTHING_SAVED and reading.notice is NoticeReading.AGREES


def test_a_claim_whose_run_events_cannot_be_read_cannot_tell() -> None:
    loaded = conversation(
        messages=[user(0), assistant(1, "Erledigt, gespeichert.")],
        runs=[a_run()],
        events={RUN_UUID: READ_ONLY},
        unreadable_events={RUN_UUID: 1},
    )

    (reading,) = read_answers(loaded)

    assert reading.claim is ClaimState.CANNOT_TELL and reading.notice is NoticeReading.CANNOT_TELL


def test_a_denial_after_recorded_writes_names_each_segment_whose_writes_it_denies() -> None:
    tour = [_written(1, 1), _written(2, 2), RunRecordEntry(TOUR, 0, 1, 0, Ended.WAITING)]
    loaded = conversation(
        messages=[user(0), assistant(1, "Gespeichert.", run_uuid=TOUR), user(3), assistant(4, DENIAL)],
        stored=[*tour, RunRecordEntry(RUN_UUID, 0, 4, 0, Ended.COMPLETED)],
        record_stored=True,
        runs=[a_run(uuid=TOUR, uid=1), a_run(uid=2)],
        events={RUN_UUID: READ_ONLY},
    )

    reading = next(r for r in read_answers(loaded) if r.run_uuid == RUN_UUID)

    assert reading.denial is DenialState.DENIES
    assert [(entry.run_uuid, entry.segment) for entry in reading.denied] == [(TOUR, 1), (TOUR, 2)]
    assert reading.denied_writes == 2


def test_an_answer_that_denies_nothing_recorded_before_it_is_no_denial() -> None:
    loaded = conversation(
        messages=[user(0), assistant(1, DENIAL)],
        stored=[RunRecordEntry(RUN_UUID, 0, 1, 0, Ended.COMPLETED)],
        record_stored=True,
        runs=[a_run()],
        events={RUN_UUID: READ_ONLY},
    )

    (reading,) = read_answers(loaded)

    assert reading.denial is DenialState.NO_EARLIER_WRITE and reading.denied == ()
