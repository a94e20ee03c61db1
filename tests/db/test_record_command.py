"""`runrecord record`: the run record rebuilt from events beside the stored one, on every dialect."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from click.testing import Result
from sqlalchemy import Engine, func, select, text, update

from adapters import schema
from adapters.conversations import load_conversation
from adapters.database import make_engine
from core.record_rebuild import rebuild_record
from data.builder import Installation
from data.generate import campaign_tours, generate
from jobs.schema_setup import init_installation
from tests.db.conftest import on_sqlite_alone
from tests.db.stories import seo_title_set

NOW = datetime(2026, 11, 29, tzinfo=UTC)
T0 = 1_790_000_000


# The rebuild is core's, the same on every dialect; what a dialect adds is reading a conversation, which
# fifty conversations of every kind exercise as well as a hundred and fifty.
GENERATED = {"sqlite": 150, "mariadb": 50, "postgresql": 50}


def test_the_record_rebuilt_from_events_equals_the_stored_one_for_every_generated_conversation(
    empty_db_url: str, dialect: str
) -> None:
    conversations = GENERATED[dialect]
    generate(empty_db_url, create_tables=init_installation, conversations=conversations, seed=11, now=NOW)
    engine = make_engine(empty_db_url)

    written = conversations + campaign_tours(conversations)  # the SEO campaign's tours among them
    reports = [rebuild_record(load_conversation(engine, uid)) for uid in range(1, written + 1)]
    engine.dispose()

    compared = [r for r in reports if r.conversation.stored_record_readable]
    assert len(compared) > 20
    assert [(r.conversation.uid, r.differences) for r in compared if r.differences] == []


@pytest.mark.parametrize(
    ("skill", "waiting", "ended", "undecided"),
    [
        ("seo-check", True, "waiting", {"kind": "card", "by": "tour_ended"}),
        ("seo-check", False, "cancelled", None),
        ("", False, "cancelled", None),
    ],
    ids=[
        "a tour cancelled while it waited on a card",
        "a tour cancelled while it ran",
        "an ordinary chat's run cancelled while it asked for get_page",
    ],
)
def test_a_cancelled_run_is_left_undecided_only_when_it_waited_for_a_decision(
    installation_engine: Engine, skill: str, waiting: bool, ended: str, undecided: dict[str, str] | None
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=T0)
        chat = site.conversation(configuration="seo-assistant", skill=skill, at=T0, page=page)
        chat.user("Starte den SEO-Check." if skill else "Wie heißt die Seite?", at=T0)
        run = chat.run()
        if skill:
            run.display("chat_set_progress")  # the tour drives its progress
            run.llm("get_page_seo")
            run.tool("get_page_seo")
        if waiting:
            run.propose("update_page_seo", page, fields=("seo_title",))
        elif skill:
            run.finish("cancelled")  # the run was cancelled while it ran: nothing waited
        else:
            run.llm("get_page")
            run.finish("cancelled")  # cancelled in AI Tasks before get_page returned
        if skill:
            chat.end_tour(at=run.now + 30)
        chat.close()
        site.finish()

    report = rebuild_record(load_conversation(installation_engine, chat.uid))

    (last,) = [entry.to_json() for entry in report.rebuilt if entry.run_uuid == run.uuid]
    assert (last["ended"], last["undecided"]) == (ended, undecided)
    assert report.differences == ()


@on_sqlite_alone
def test_record_marks_a_stored_entry_that_differs_from_the_events(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        chat, run, page = seo_title_set(site, at=T0)
        stored = chat.run_record()
        stored[-1]["writes"] = []  # the chat stored a record that lost the write
        chat.run_record_override = json.dumps(stored)
        chat.close()
        site.finish()

    result = run_cli("record", str(chat.uid), "--db", installation_url, "--json")

    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["differences"] == [
        {"runUuid": run.uuid, "segment": 1, "kind": "changed", "fields": ["writes"]}
    ]
    assert report["rebuilt"][-1]["writes"] == [{"record": f"pages:{page.uid}", "completeness": "complete"}]


def _title_set(engine: Engine) -> tuple[Any, Any]:
    """The SEO title story's conversation, stored with its record, and its run."""
    with engine.begin() as connection:
        site = Installation(connection)
        chat, run, _ = seo_title_set(site, at=T0)
        chat.close()
        site.finish()
    return chat, run


def _lines_of_run(result: Result, run: Any) -> list[str]:
    """The difference lines `record` printed for the run; the command succeeded."""
    assert result.exit_code == 0, result.output
    return [line for line in result.stdout.splitlines() if f"run {run.uuid[:8]} segment" in line]


@on_sqlite_alone
def test_record_says_that_a_stored_entrys_run_was_purged_rather_than_only_that_it_differs(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    chat, run = _title_set(installation_engine)
    with installation_engine.begin() as connection:  # nr-llm's retention purge (DOMAIN.md, "Retention")
        connection.execute(schema.agentrun_event.delete().where(schema.agentrun_event.c.run == run.uid))
        connection.execute(schema.agentrun.delete().where(schema.agentrun.c.uid == run.uid))

    purged = _lines_of_run(run_cli("record", str(chat.uid), "--db", installation_url), run)

    assert purged and all("its run is not in tx_nrllm_agentrun" in line for line in purged)


@on_sqlite_alone
def test_record_says_that_a_difference_may_come_from_an_event_of_the_run_that_cannot_be_read(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    chat, run = _title_set(installation_engine)
    event = schema.agentrun_event
    with installation_engine.begin() as connection:  # the approval that opened the run's second segment
        connection.execute(
            update(event).where(event.c.run == run.uid, event.c.kind == "approval").values(payload="{bad")
        )

    differing = _lines_of_run(run_cli("record", str(chat.uid), "--db", installation_url), run)

    assert differing and all("1 event of its run cannot be read" in line for line in differing)


@on_sqlite_alone
def test_record_names_each_unreadable_row_and_shows_the_rest(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=T0)
        chat = site.conversation(configuration="seo-assistant", at=T0, page=page)
        chat.user("Setze den Titel.", at=T0)
        run = chat.run()
        run.propose("update_page_seo", page, fields=("seo_title",))
        run.approve(raw_target="{not json")
        run.answer("Gespeichert.")
        run.finish()
        chat.run_record_override = "[{oops"
        chat.card_outcomes_override = "not json either"
        chat.close()
        site.finish()
        e = schema.agentrun_event.c
        connection.execute(update(schema.agentrun_event).where(e.kind == "context").values(kind="thinking"))

    result = run_cli("record", str(chat.uid), "--db", installation_url)

    assert result.exit_code == 0
    warnings = result.stderr.splitlines()
    assert any("run_record" in line and "not JSON" in line for line in warnings)
    assert any("card_outcomes" in line and "not JSON" in line for line in warnings)
    assert any("payload_not_json" in line for line in warnings)
    assert any("unknown_kind" in line for line in warnings)
    assert all(line.startswith(f"runrecord: warning: conversation {chat.uid}: ") for line in warnings)
    assert "stored run record: none readable" in result.stdout
    assert "update_page_seo" in result.stdout


# Only SQLite stores bytes that are no UTF-8 text in a text column.
@on_sqlite_alone
@pytest.mark.parametrize("command", ["record", "notes"])
def test_a_payload_of_bytes_that_are_no_text_is_not_json_and_the_rest_is_shown(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result], command: str
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        chat, _, _ = seo_title_set(site, at=T0)
        chat.close()
        site.finish()
        m = schema.message.c
        no_text = text("x'ff80'")
        connection.execute(update(schema.conversation).values(run_record=no_text, card_outcomes=no_text))
        first = connection.execute(select(func.min(m.uid)).where(m.conversation == chat.uid)).scalar_one()
        connection.execute(update(schema.message).where(m.uid == first).values(payload=no_text))

    result = run_cli(command, str(chat.uid), "--db", installation_url)

    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    warnings = result.stderr.splitlines()
    assert any("card_outcomes" in line and "not JSON" in line for line in warnings), warnings
    assert all(line.startswith(f"runrecord: warning: conversation {chat.uid}: ") for line in warnings)


@on_sqlite_alone
def test_record_of_a_conversation_that_does_not_exist_fails_in_one_line(
    installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli("record", "4242", "--db", installation_url)

    assert result.exit_code == 1
    assert result.stderr == "runrecord: error: conversation 4242 does not exist\n"


def test_a_database_without_the_chat_tables_asks_whether_it_is_the_installation_s_on_every_dialect(
    empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    # init-db makes runrecord's own tables, never the chat's: the hint names what a user can do instead.
    result = run_cli("record", "1", "--db", empty_db_url)

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.endswith(
        "(a table of the installation itself: is this the installation's database?)\n"
    )
    assert "init-db" not in result.stderr


@pytest.mark.parametrize("declined", [False, True], ids=["approved", "declined"])
def test_a_call_held_beside_a_proposal_is_neither_a_failed_tool_nor_waiting(
    installation_engine: Engine, declined: bool
) -> None:
    """000_…, amendment, table: "Beside a proposal or a question: a second write, a call that needs input, a
    remote call → not run (held)"; the approved call is the card's own call."""
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=T0)
        chat = site.conversation(configuration="seo-assistant", at=T0, page=page)
        chat.user("Setze den Titel und lege eine Unterseite an.", at=T0)
        run = chat.run()
        run.propose("update_page_seo", page, fields=("seo_title",), beside=("create_page_draft",))
        if declined:
            run.decline("Behalten")
        else:
            run.approve()
        run.answer("Erledigt.")
        run.finish()
        chat.close()
        site.finish()

    report = rebuild_record(load_conversation(installation_engine, chat.uid))

    waiting, continued = (entry.to_json() for entry in report.rebuilt)
    assert waiting["waiting"] == [{"tool": "update_page_seo"}]
    assert all(tool["name"] != "create_page_draft" for tool in waiting["tools"] + continued["tools"])
    assert report.differences == ()
