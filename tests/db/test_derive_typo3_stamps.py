"""derive-outcomes on sys_history as TYPO3 writes it (DESIGN.md rules 3, 4 and 7; DOMAIN.md, "When a row is
stamped", "Who wrote it", "Workspaces", "correlation_id"), on SQLite, MariaDB and PostgreSQL.

The runs and their tool_write events are written with the builder; every sys_history row is planted here with
its uid (the order TYPO3 inserted it), its stamp (the start of the process that wrote it), its writer, its
workspace and its correlation id; `runrecord derive-outcomes` runs, and the outcome is read back from what it
stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, func, insert, select

from adapters import schema
from core.time import DAY_S
from data.agent_run import Run, Write
from data.builder import Installation
from data.records import Record
from jobs.cli import main

DAY = DAY_S
HOUR = 3600
WINDOW = 7 * DAY
NOW = 1_790_000_000
T = NOW - 30 * DAY
CREATED = T - 30 * DAY
EDITOR, OTHER_EDITOR, CLI = 7, 8, 9


@dataclass(frozen=True)
class Row:
    """A sys_history row as DataHandler inserts it."""

    at: int  # tstamp: the start of the writing process
    by: int  # userid: the acting backend user
    action: int = 2
    new: dict[str, Any] | None = None
    old: dict[str, Any] | None = None
    workspace: int = 0
    correlation_id: str = ""
    usertype: str = "BE"  # Extbase history tracking writes 'FE' rows with a frontend user's uid


@contextmanager
def installation(engine: Engine) -> Iterator[Installation]:
    with engine.begin() as connection:
        site = Installation(connection)
        yield site
        site.finish()


def a_page(site: Installation) -> Record:
    return site.page("Produkte", at=CREATED)


def a_run(site: Installation, *, at: int, editor: int = EDITOR) -> Run:
    chat = site.conversation(configuration="content-assistant", at=at - 120, editor=editor)
    chat.user("Bitte überarbeite die Seite.", at=at - 120)
    return chat.run()


def written_by(run: Run, record: Record, *, at: int) -> Write:
    """The model proposes, the editor approves at `at`, the tool writes; its history row is planted apart."""
    run.propose("update_record", record, fields=("title",))
    written = run.approve(at=at, history=False)
    assert written is not None
    return written


def end(run: Run) -> None:
    run.answer("Gespeichert.")
    run.finish()
    run.chat.close()


def one_write(site: Installation, record: Record, *, at: int = T, editor: int = EDITOR) -> tuple[Run, Write]:
    run = a_run(site, at=at, editor=editor)
    written = written_by(run, record, at=at)
    end(run)
    return run, written


def plant(engine: Engine, record: Record, *rows: Row) -> list[int]:
    """The record's rows in the order TYPO3 inserted them, after every row already there; their uids."""
    h = schema.sys_history
    with engine.begin() as connection:
        first = int(connection.execute(select(func.coalesce(func.max(h.c.uid), 0))).scalar_one()) + 1
        uids = list(range(first, first + len(rows)))
        for uid, row in zip(uids, rows, strict=True):
            if row.action == 2:
                data: str | None = json.dumps({"oldRecord": row.old or {}, "newRecord": row.new or {}})
            elif row.action == 1:
                data = json.dumps(row.new or {})
            else:
                data = None
            connection.execute(
                insert(h).values(
                    uid=uid,
                    tstamp=row.at,
                    actiontype=row.action,
                    usertype=row.usertype,
                    userid=row.by,
                    recuid=record.uid,
                    tablename=record.table,
                    history_data=data,
                    workspace=row.workspace,
                    correlation_id=row.correlation_id,
                )
            )
        users = schema.be_users
        if connection.execute(select(func.count()).select_from(users)).scalar_one() == 0:
            for uid, name in ((EDITOR, "redakteurin"), (OTHER_EDITOR, "redakteur"), (CLI, "_cli_")):
                connection.execute(insert(users).values(uid=uid, username=name))
    return uids


def ai_row(
    at: int, *, by: int = EDITOR, title: str = "KI-Titel", before: str = "Produkte", **extra: Any
) -> Row:
    return Row(at, by, new={"title": title}, old={"title": before}, **extra)


def hand(at: int, *, by: int = OTHER_EDITOR, usertype: str = "BE", **new: Any) -> Row:
    fields = new or {"title": "von Hand"}
    return Row(at, by, new=fields, old=dict.fromkeys(fields, ""), usertype=usertype)


@dataclass(frozen=True)
class Outcome:
    outcome: str
    reason: str = ""
    edit_scope: str = ""
    decided_by: tuple[int, ...] = ()


def derived(engine: Engine, *writes: Write) -> list[Outcome]:
    """What `runrecord derive-outcomes` stored for the writes."""
    url = engine.url.render_as_string(hide_password=False)
    now = datetime.fromtimestamp(NOW, UTC).isoformat()
    result = CliRunner().invoke(main, ["derive-outcomes", "--db", url, "--now", now], prog_name="runrecord")
    assert result.exit_code == 0, result.output
    w = schema.write_outcome.c
    with engine.connect() as connection:
        rows = {
            int(row.event_uid): row
            for row in connection.execute(
                select(w.event_uid, w.outcome, w.reason, w.edit_scope, w.decided_by)
            )
        }
    return [
        Outcome(
            rows[x.event_uid].outcome,
            rows[x.event_uid].reason,
            rows[x.event_uid].edit_scope,
            tuple(json.loads(rows[x.event_uid].decided_by or "[]")),
        )
        for x in writes
    ]


ACCEPTED = "accepted_unchanged"


def test_an_exec_card_write_stamped_3_s_before_its_event_is_edited_same_fields_by_an_edit_of_its_field(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, edit = plant(installation_engine, page, ai_row(T - 3), hand(T + DAY))

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="same_fields", decided_by=(own, edit))


def test_a_write_75_s_into_a_long_turn_is_matched_to_its_row_stamped_at_the_turns_start(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, edit = plant(installation_engine, page, ai_row(T - 75), hand(T + HOUR))

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="same_fields", decided_by=(own, edit))


def test_a_write_of_a_worker_started_three_days_before_is_matched_to_its_row(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, edit = plant(installation_engine, page, ai_row(T - 3 * DAY), hand(T + DAY))

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="same_fields", decided_by=(own, edit))


def test_a_worker_restarted_inside_the_window_writes_ai_rows_not_human_edits(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, first = one_write(site, page)
        _, second = one_write(site, page, at=T + DAY)
    own_first, own_second = plant(
        installation_engine, page, ai_row(T - 2 * DAY), ai_row(T + DAY // 2, title="Zweiter")
    )

    results = derived(installation_engine, first, second)

    assert results == [
        Outcome(ACCEPTED, decided_by=(own_first,)),
        Outcome(ACCEPTED, decided_by=(own_second,)),
    ]


def test_a_rewrite_by_a_second_run_a_day_later_is_no_human_edit_of_the_first(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, first = one_write(site, page)
        _, second = one_write(site, page, at=T + DAY, editor=OTHER_EDITOR)
    own_first, own_second = plant(
        installation_engine, page, ai_row(T - 3), ai_row(T + DAY - 4, by=OTHER_EDITOR, title="Neu")
    )

    results = derived(installation_engine, first, second)

    assert results == [
        Outcome(ACCEPTED, decided_by=(own_first,)),
        Outcome(ACCEPTED, decided_by=(own_second,)),
    ]


def test_the_chatting_editors_hand_edit_between_two_ai_writes_edits_the_first_only(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, first = one_write(site, page)
        _, second = one_write(site, page, at=T + 2 * HOUR)
    own, edit, own_second = plant(
        installation_engine, page, ai_row(T - 3), hand(T + HOUR, by=EDITOR), ai_row(T + 2 * HOUR - 10)
    )

    results = derived(installation_engine, first, second)

    assert results == [
        Outcome("edited", edit_scope="same_fields", decided_by=(own, edit)),
        Outcome(ACCEPTED, decided_by=(own_second,)),
    ]


def test_a_draft_published_inside_the_window_is_edited_with_the_drafts_fields(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, _, publish = plant(
        installation_engine,
        page,
        ai_row(T - 3),
        Row(T + DAY, OTHER_EDITOR, new={"title": "Entwurf"}, workspace=1),
        Row(T + 2 * DAY, OTHER_EDITOR, action=7),
    )

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="same_fields", decided_by=(own, publish))


@pytest.mark.parametrize(
    ("action", "expected"),
    [(2, Outcome("edited", edit_scope="other_fields")), (4, Outcome("discarded"))],
    ids=["a modify", "a delete"],
)
def test_a_workspaces_row_on_the_live_record_that_no_publish_follows_changed_it(
    installation_engine: Engine, action: int, expected: Outcome
) -> None:
    # TYPO3 12.4 and 13.4.0-13.4.15 publish a draft as a modify row on the live uid written with the
    # publisher's workspace (DataHandler::setHistory); a table without versioning is edited live from a
    # workspace. Only a draft's rows that a later publish moved onto the record are no change of it.
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    new = {"description": "Entwurf"} if action == 2 else None
    own, change = plant(
        installation_engine,
        page,
        ai_row(T - 3),
        Row(T + DAY, OTHER_EDITOR, action=action, new=new, workspace=1),
    )

    (result,) = derived(installation_engine, write)

    assert result == replace(expected, decided_by=(own, change))


def test_a_write_to_a_record_created_in_a_workspace_and_not_published_is_no_live_change(
    installation_engine: Engine,
) -> None:
    # Such a record's version has its own uid: its rows are a workspace's from its add row on, and TYPO3
    # before 13.4.16 writes no publish row when it publishes one.
    with installation(installation_engine) as site:
        page = site.page("Produkte", at=CREATED, history=False)
        _, write = one_write(site, page)
    created = {"uid": page.uid, "pid": 1, "title": "Entwurf", "t3ver_wsid": 1, "t3ver_state": 1}
    plant(
        installation_engine,
        page,
        Row(T - DAY, OTHER_EDITOR, action=1, new=created, workspace=1),
        ai_row(T - 3, workspace=1),
        Row(T + DAY, OTHER_EDITOR, new={"description": "Entwurf"}, workspace=1),
    )

    (result,) = derived(installation_engine, write)

    assert result == Outcome("unknown", reason="no_history_row")


@pytest.mark.parametrize(
    ("frontend_user", "at"),
    [(EDITOR, T - 2), (CLI, T + DAY)],
    ids=["the chatting editor's, inserted by the write's moment", "_cli_'s"],
)
def test_a_frontend_users_row_is_a_persons_change_whatever_backend_users_uid_it_carries(
    installation_engine: Engine, frontend_user: int, at: int
) -> None:
    # An 'FE' row's userid is a frontend user's uid (DOMAIN.md, "Who wrote it"): equal to the chatting
    # editor's, it is not the write's own row though it is the last row inserted by its moment; equal to
    # _cli_'s, it is no automation row.
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, changed = plant(installation_engine, page, ai_row(T - 3), hand(at, by=frontend_user, usertype="FE"))

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="same_fields", decided_by=(own, changed))


def test_a_frontend_users_row_with_the_second_writers_uid_is_no_ai_row_of_a_record_two_editors_wrote(
    installation_engine: Engine,
) -> None:
    # Two backend users wrote the record: a row's writer is looked up among the record's writers by user.
    with installation(installation_engine) as site:
        page = a_page(site)
        _, first = one_write(site, page)
        _, second = one_write(site, page, at=T + DAY, editor=OTHER_EDITOR)
    # The frontend user's row is the last row with the second writer's uid inserted by the second write's
    # moment: were it compared as a backend user's, it would be that write's own row.
    own_first, own_second, changed = plant(
        installation_engine,
        page,
        ai_row(T - 3),
        ai_row(T + DAY - 4, by=OTHER_EDITOR, title="Neu"),
        hand(T + DAY - 2, by=OTHER_EDITOR, usertype="FE"),
    )

    results = derived(installation_engine, first, second)

    assert results == [
        Outcome("edited", edit_scope="same_fields", decided_by=(own_first, changed)),
        Outcome("edited", edit_scope="same_fields", decided_by=(own_second, changed)),
    ]


def version_copy(at: int, record: Record, *, by: int = OTHER_EDITOR) -> Row:
    """The draft a first edit in a workspace adds (DataHandler::insertDB): an add row holding every field of
    the record, pointed at the live record when the draft is published (RecordHistoryStore)."""
    fields = {"uid": record.uid + 1000, "pid": 1, "title": "KI-Titel", "description": "", "hidden": 0}
    return Row(at, by, action=1, new={**fields, "t3ver_oid": record.uid, "t3ver_wsid": 1}, workspace=1)


@pytest.mark.parametrize(
    ("publisher", "expected"),
    [(OTHER_EDITOR, Outcome("edited", edit_scope="other_fields")), (CLI, Outcome(ACCEPTED))],
    ids=["an editor's publish", "_cli_'s publish"],
)
def test_a_publish_changed_the_fields_its_drafts_modified_not_every_field_of_the_version_copy(
    installation_engine: Engine, publisher: int, expected: Outcome
) -> None:
    # The AI wrote the title; the draft changed the description alone. An editor's publish edits another
    # field; a _cli_ task's publish of another field changes nothing (DESIGN.md rule 4).
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, _, _, publish = plant(
        installation_engine,
        page,
        ai_row(T - 3),
        version_copy(T + DAY, page),
        Row(T + DAY, OTHER_EDITOR, new={"description": "Entwurf"}, old={"description": ""}, workspace=1),
        Row(T + 2 * DAY, publisher, action=7),
    )

    (result,) = derived(installation_engine, write)

    deciding = (own,) if expected.outcome == ACCEPTED else (own, publish)
    assert result == replace(expected, decided_by=deciding)


def test_a_publish_moves_only_its_own_records_drafts(installation_engine: Engine) -> None:
    # The page's publish has no draft of its own: which fields it changed cannot be told, whatever the draft
    # of another page the agent wrote too.
    with installation(installation_engine) as site:
        page, other = a_page(site), a_page(site)
        _, write = one_write(site, page)
        one_write(site, other, at=T + 60)
    (own,) = plant(installation_engine, page, ai_row(T - 3))
    plant(
        installation_engine,
        other,
        ai_row(T + 57),
        Row(T + DAY, OTHER_EDITOR, new={"title": "Entwurf"}, workspace=1),
    )
    (publish,) = plant(installation_engine, page, Row(T + 2 * DAY, OTHER_EDITOR, action=7))

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="fields_unknown", decided_by=(own, publish))


def test_a_draft_published_after_the_window_is_accepted_unchanged(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, _, _ = plant(
        installation_engine,
        page,
        ai_row(T - 3),
        Row(T + DAY, OTHER_EDITOR, new={"title": "Entwurf"}, workspace=1),
        Row(T + WINDOW + DAY, OTHER_EDITOR, action=7),
    )

    (result,) = derived(installation_engine, write)

    assert result == Outcome(ACCEPTED, decided_by=(own,))


def test_a_cli_task_that_overwrote_the_title_is_unknown_changed_by_automation(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    plant(installation_engine, page, ai_row(T - 3), hand(T + DAY, by=CLI))

    (result,) = derived(installation_engine, write)

    assert result == Outcome("unknown", reason="changed_by_automation")


def test_a_long_cli_task_stamped_inside_the_window_counts_though_saved_after_a_later_stamped_edit(
    installation_engine: Engine,
) -> None:
    # The task started six days after the write and saved its row after an editor's row stamped past the
    # window's close: its row is still stamped inside the window.
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    plant(
        installation_engine,
        page,
        ai_row(T - 3),
        hand(T + 8 * DAY, description="Später"),
        hand(T + 6 * DAY, by=CLI),
    )

    (result,) = derived(installation_engine, write)

    assert result == Outcome("unknown", reason="changed_by_automation")


def test_a_cli_task_on_another_field_changes_nothing(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, _ = plant(installation_engine, page, ai_row(T - 3), hand(T + DAY, by=CLI, description="Automatisch"))

    (result,) = derived(installation_engine, write)

    assert result == Outcome(ACCEPTED, decided_by=(own,))


def test_an_editor_who_restored_the_old_title_reverted_the_write(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, edit = plant(
        installation_engine,
        page,
        ai_row(T - 3, before="Produkte"),
        Row(T + DAY, OTHER_EDITOR, new={"title": "Produkte"}, old={"title": "KI-Titel"}),
    )

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="reverted", decided_by=(own, edit))


def test_a_rewrite_of_the_title_that_is_not_a_revert_is_same_fields(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, edit = plant(
        installation_engine,
        page,
        ai_row(T - 3, before="Produkte"),
        Row(T + DAY, OTHER_EDITOR, new={"title": "produkte"}, old={"title": "KI-Titel"}),
    )

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="same_fields", decided_by=(own, edit))


def test_a_revert_edited_again_afterwards_in_the_window_is_no_revert(installation_engine: Engine) -> None:
    # The field's last human change decides, not its first.
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, back, again = plant(
        installation_engine,
        page,
        ai_row(T - 3, before="Produkte"),
        Row(T + DAY, OTHER_EDITOR, new={"title": "Produkte"}, old={"title": "KI-Titel"}),
        Row(T + 2 * DAY, OTHER_EDITOR, new={"title": "Neu"}, old={"title": "Produkte"}),
    )

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="same_fields", decided_by=(own, back, again))


def test_a_rewrite_then_restored_in_the_window_is_a_revert(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, write = one_write(site, page)
    own, other, back = plant(
        installation_engine,
        page,
        ai_row(T - 3, before="Produkte"),
        Row(T + DAY, OTHER_EDITOR, new={"title": "Neu"}, old={"title": "KI-Titel"}),
        Row(T + 2 * DAY, OTHER_EDITOR, new={"title": "Produkte"}, old={"title": "Neu"}),
    )

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="reverted", decided_by=(own, other, back))


def test_a_row_whose_correlation_id_names_the_run_is_its_own_whatever_its_stamp(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        run, write = one_write(site, page)
    own, edit = plant(
        installation_engine,
        page,
        ai_row(T + 40, correlation_id=f"0400${run.uuid}:0123456789abcdef0123456789abcdef"),
        hand(T + DAY),
    )

    (result,) = derived(installation_engine, write)

    assert result == Outcome("edited", edit_scope="same_fields", decided_by=(own, edit))


def test_two_writes_with_one_row_between_them_leave_the_first_unknown_own_row_unclear(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = a_page(site)
        _, first = one_write(site, page)
        _, second = one_write(site, page, at=T + HOUR)
    own_second, edit = plant(installation_engine, page, ai_row(T - 10), hand(T + DAY))

    results = derived(installation_engine, first, second)

    assert results == [
        Outcome("unknown", reason="own_row_unclear"),
        Outcome("edited", edit_scope="same_fields", decided_by=(own_second, edit)),
    ]
