"""The manifest's expected outcome of a write, read from the rows planted for its record the way TYPO3 writes
them (DESIGN.md rules 3, 4 and 7): process-start stamps, insertion order, who wrote each row."""

from __future__ import annotations

import pytest

from core.outcomes import Action
from core.time import DAY_S
from data.agent_run import Run, Write
from data.builder import HistoryOrder, Installation
from data.chat import Conversation
from data.fates import Expected, RecordReading, expected_write
from data.records import Record

DAY = DAY_S
WINDOW = 7 * DAY
T = 1_790_000_000
EDITOR = 90_001
CLI = 90_100


class Processes:
    """The processes of a test: every segment's process started `before` seconds before its request."""

    def __init__(self, before: int, processing: str = "exec") -> None:
        self.before = before
        self.processing = processing

    def started(self, request_at: int) -> int:
        return request_at - self.before


def site() -> Installation:
    return Installation(None, history_order=HistoryOrder.MOMENTS)


def chat(site: Installation, at: int, *, before: int = 3, names_runs: bool = False) -> Conversation:
    conversation = site.conversation(configuration="content-assistant", at=at, editor=EDITOR)
    conversation.processes = Processes(before)
    conversation.names_runs = names_runs
    conversation.user("Bitte den Seitentitel setzen.", at=at)
    return conversation


def card_write(conversation: Conversation, record: Record, *, at: int, field: str = "seo_title") -> Write:
    run = conversation.run(at=at - 60)
    return approved(run, record, at=at, field=field)


def approved(run: Run, record: Record, *, at: int, field: str = "seo_title") -> Write:
    run.propose("update_page_seo", record, fields=(field,))
    written = run.approve(at=at)
    assert written is not None
    return written


def expected(record: Record, *writes: Write, cli_user: int | None = CLI) -> list[Expected]:
    reading = RecordReading(record, writes, horizon=0, cli_user=cli_user)
    return [expected_write(w, reading, oldest_retained=0, window_s=WINDOW) for w in writes]


def page(installation: Installation) -> Record:
    return installation.page("Angebote", at=T - 30 * DAY, by=EDITOR)


def test_an_exec_write_stamped_3_s_before_its_event_is_its_own_row_and_accepted() -> None:
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120, before=3), record, at=T)

    outcomes = expected(record, written)

    assert written.own_row is not None and written.own_row.stamp == written.written_at - 3
    assert outcomes == [Expected("accepted_unchanged")]


def test_a_worker_row_stamped_three_days_before_is_the_writes_own_and_an_edit_after_it_edits() -> None:
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120, before=3 * DAY), record, at=T)
    installation.human_edit(record, {"seo_title": "von Hand"}, at=T + DAY, by=EDITOR)

    outcomes = expected(record, written)

    assert outcomes == [Expected("edited", edit_scope="same_fields")]


def test_the_chatting_editors_hand_edit_between_two_ai_writes_edits_the_first_write_only() -> None:
    installation = site()
    record = page(installation)
    conversation = chat(installation, T - 120, before=2 * DAY)
    run = conversation.run(at=T - 60)
    first = approved(run, record, at=T, field="seo_title")
    installation.human_edit(record, {"title": "von Hand"}, at=T + 5, by=EDITOR)
    second = approved(run, record, at=T + 60, field="og_title")

    outcomes = expected(record, first, second)

    assert outcomes == [Expected("edited", edit_scope="other_fields"), Expected("accepted_unchanged")]


def test_a_second_runs_rewrite_a_day_later_is_no_human_edit_of_the_first() -> None:
    installation = site()
    record = page(installation)
    conversation = chat(installation, T - 120, before=4)
    first = card_write(conversation, record, at=T)
    second = card_write(conversation, record, at=T + DAY)

    outcomes = expected(record, first, second)

    assert outcomes == [Expected("accepted_unchanged")] * 2


def test_rows_numbered_by_moment_put_a_fate_told_first_after_a_later_write() -> None:
    installation = site()
    record = page(installation)
    conversation = chat(installation, T - 120, before=DAY)
    edit = installation.history_row(
        record, Action.MODIFY, at=T + 2 * DAY, new={"title": "x"}, old={"title": ""}, by=EDITOR
    )
    written = card_write(conversation, record, at=T + DAY)

    installation.flush()

    assert written.own_row is not None and 0 < written.own_row.uid < edit.uid


def test_a_draft_published_inside_the_window_is_edited_with_the_drafts_fields() -> None:
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120), record, at=T)
    draft = {"new": {"seo_title": "Entwurf"}, "old": {"seo_title": "neu: seo_title"}}
    installation.history(record, Action.MODIFY, at=T + DAY, by=EDITOR, workspace=1, **draft)
    installation.history(record, Action.PUBLISH, at=T + 2 * DAY, by=90_002)

    outcomes = expected(record, written)

    assert outcomes == [Expected("edited", edit_scope="same_fields")]


def test_a_publish_changed_the_fields_its_drafts_modified_not_every_field_of_the_version_copy() -> None:
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120), record, at=T)
    copy = {"title": "Produkte", "seo_title": "neu: seo_title", "t3ver_oid": record.uid, "t3ver_wsid": 1}
    installation.history(record, Action.ADD, at=T + DAY, by=EDITOR, workspace=1, new=copy)
    draft = {"new": {"title": "Entwurf"}, "old": {"title": "Produkte"}}
    installation.history(record, Action.MODIFY, at=T + DAY, by=EDITOR, workspace=1, **draft)
    installation.history(record, Action.PUBLISH, at=T + 2 * DAY, by=90_002)

    outcomes = expected(record, written)

    assert outcomes == [Expected("edited", edit_scope="other_fields")]


def test_a_draft_published_after_the_window_leaves_the_write_accepted() -> None:
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120), record, at=T)
    draft = {"new": {"seo_title": "Entwurf"}, "old": {"seo_title": "neu: seo_title"}}
    installation.history(record, Action.MODIFY, at=T + DAY, by=EDITOR, workspace=1, **draft)
    installation.history(record, Action.PUBLISH, at=T + WINDOW + DAY, by=90_002)

    outcomes = expected(record, written)

    assert outcomes == [Expected("accepted_unchanged")]


def test_a_workspaces_modify_on_the_record_that_no_publish_follows_is_an_edit() -> None:
    # TYPO3 before 13.4.16 publishes a draft as a modify row of the publisher's workspace on the live uid.
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120), record, at=T)
    published = {"new": {"title": "Entwurf"}, "old": {"title": "Produkte"}}
    installation.history(record, Action.MODIFY, at=T + DAY, by=90_002, workspace=1, **published)

    outcomes = expected(record, written)

    assert outcomes == [Expected("edited", edit_scope="other_fields")]


def test_another_editors_row_inserted_before_a_write_without_its_own_row_is_no_evidence() -> None:
    installation = site()
    record = installation.page("Angebote", at=T - 30 * DAY, by=90_002)
    written = card_write(chat(installation, T - 120), record, at=T)
    record.history = [row for row in record.history if row.user != EDITOR]  # the write's own row is gone

    outcomes = expected(record, written)

    assert outcomes == [Expected("unknown", "no_history_row")]


def test_a_cli_task_changing_a_field_the_ai_wrote_is_unknown_changed_by_automation() -> None:
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120), record, at=T)
    change = {"new": {"seo_title": "vom Import"}, "old": {"seo_title": "neu: seo_title"}}
    installation.history(record, Action.MODIFY, at=T + DAY - 300, moment=T + DAY, by=CLI, **change)

    outcomes = expected(record, written)

    assert outcomes == [Expected("unknown", "changed_by_automation")]


def test_a_cli_task_changing_another_field_changes_nothing() -> None:
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120), record, at=T)
    installation.history(
        record, Action.MODIFY, at=T + DAY, new={"title": "vom Import"}, old={"title": ""}, by=CLI
    )

    outcomes = expected(record, written)

    assert outcomes == [Expected("accepted_unchanged")]


def test_without_a_cli_user_a_tasks_change_is_a_human_edit() -> None:
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120), record, at=T)
    installation.history(
        record, Action.MODIFY, at=T + DAY, new={"title": "vom Import"}, old={"title": ""}, by=CLI
    )

    outcomes = expected(record, written, cli_user=None)

    assert outcomes == [Expected("edited", edit_scope="other_fields")]


def test_a_rollback_to_the_values_before_the_write_is_reverted_and_a_rewrite_is_same_fields() -> None:
    installation = site()
    reverted, rewritten = page(installation), page(installation)
    conversation = chat(installation, T - 120)
    undone = card_write(conversation, reverted, at=T)
    kept = card_write(conversation, rewritten, at=T + 10)
    installation.human_edit(reverted, {"seo_title": reverted.before_ai["seo_title"]}, at=T + DAY, by=EDITOR)
    installation.human_edit(rewritten, {"seo_title": "von Hand"}, at=T + DAY, by=EDITOR)

    outcomes = expected(reverted, undone) + expected(rewritten, kept)

    assert outcomes == [
        Expected("edited", edit_scope="reverted"),
        Expected("edited", edit_scope="same_fields"),
    ]


def test_a_row_naming_its_run_is_the_writes_own_whatever_its_stamp() -> None:
    installation = site()
    record = page(installation)
    written = card_write(chat(installation, T - 120, before=30 * DAY, names_runs=True), record, at=T)

    outcomes = expected(record, written)

    assert written.own_row is not None and written.own_row.names_run == written.run_uuid
    assert outcomes == [Expected("accepted_unchanged")]


@pytest.mark.parametrize("names_runs", [False, True], ids=["by writer", "by the run its rows name"])
def test_a_write_whose_row_later_writes_need_is_unknown_own_row_unclear(names_runs: bool) -> None:
    # As core.own_rows matches a lane's rows, a writer's or a named run's: from its last write backwards.
    installation = site()
    record = installation.page("Angebote", at=T - 30 * DAY, by=90_002, history=False)
    conversation = chat(installation, T - 120, before=DAY, names_runs=names_runs)
    run = conversation.run(at=T - 60)
    run.propose("update_page_seo", record, fields=("seo_title",))
    lost = run.approve(at=T, history=False)  # its row never came
    found = approved(run, record, at=T + 60, field="og_title")
    assert lost is not None

    outcomes = expected(record, lost, found)

    assert outcomes == [Expected("unknown", "own_row_unclear"), Expected("accepted_unchanged")]


def test_an_editors_act_after_the_installations_end_has_not_happened_and_leaves_the_record_alone() -> None:
    installation = Installation(None, history_order=HistoryOrder.MOMENTS, until=T)
    record = page(installation)
    planted = len(record.history)

    installation.human_edit(record, {"title": "später"}, at=T + 1, by=EDITOR)
    installation.set_hidden(record, True, at=T + 1, by=EDITOR)
    installation.move(record, at=T + 1, by=EDITOR)
    installation.delete(record, at=T + 1, by=EDITOR, hard=True)

    assert (len(record.history), record.value("title"), record.hidden, record.deleted, record.gone) == (
        planted,
        "Angebote",
        False,
        False,
        False,
    )


def test_a_delete_at_the_installations_end_happened_and_its_undo_a_second_later_has_not() -> None:
    installation = Installation(None, history_order=HistoryOrder.MOMENTS, until=T)
    record = page(installation)
    planted = len(record.history)

    installation.delete(record, at=T, by=EDITOR)
    installation.undelete(record, at=T + 1, by=EDITOR)

    assert (len(record.history), record.deleted) == (planted + 1, True)
