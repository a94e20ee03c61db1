"""`runrecord notes`: the notes the next turn gets, exactly as it gets them, on every dialect."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from click.testing import Result
from sqlalchemy import Engine

from adapters import schema
from adapters.conversations import last_page_visible, load_conversation
from adapters.database import make_engine
from adapters.settings import own_transcript_skills
from core.notes import NOTE_LABEL, OWN_TRANSCRIPT_REASON
from core.record_rebuild import next_turn_notes, rebuild_record
from core.time import DAY_S
from data.builder import Installation
from data.generate import campaign_tours, generate
from data.own_transcript import ALT_TEXT_SKILL
from jobs.schema_setup import init_installation
from tests.db.conftest import on_sqlite_alone
from tests.db.stories import seo_title_set

NOW = datetime(2026, 11, 29, tzinfo=UTC)
T0 = 1_790_000_000
LABEL = NOTE_LABEL.removesuffix("…]")


def test_conversation_1_gives_notes_of_six_records_written_on_one_page_and_six_cards_approved(
    empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    generate(empty_db_url, create_tables=init_installation, conversations=20, seed=3, now=NOW)

    result = run_cli("notes", "1", "--db", empty_db_url, "--json")

    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    written = [n for n in notes if "Records written: pages:" in n["text"]]
    approved = [n for n in notes if "(approved)" in n["text"]]
    assert len(written) == 6 and len({n["text"].split("Records written: ")[1] for n in written}) == 1
    assert len(approved) == 6
    assert all(n["text"].startswith(LABEL) for n in notes)
    assert {n["placement"] for n in notes} == {"assistant"}
    question = json.loads(run_cli("record", "1", "--db", empty_db_url, "--json").stdout)
    assert question["differences"] == []


def test_a_conversation_without_a_run_record_still_gets_notes_of_its_card_outcomes(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=T0)
        chat = site.conversation(configuration="seo-assistant", at=T0, page=page)
        chat.stores_run_record = False  # a tour finished before the chat stored run records
        chat.user("Setze den Titel.", at=T0)
        run = chat.run()
        run.say("Ich schlage einen Titel vor.")
        run.propose("update_page_seo", page, fields=("seo_title",))
        run.approve()
        run.answer("Gespeichert.")
        run.finish()
        chat.user("was ist hier passiert?", at=T0 + 3 * DAY_S)
        chat.close()
        site.finish()

    result = run_cli("notes", str(chat.uid), "--db", installation_url, "--json")

    notes = json.loads(result.stdout)["notes"]
    assert [n["text"] for n in notes if "seo_title" in n["text"] and "approved" in n["text"]]
    assert json.loads(result.stdout)["dropped"] == {"count": 0, "chars": 0}


@pytest.mark.parametrize("last_page", [2_147_483_648, 9_223_372_036_854_775_808, 10**23])
def test_a_last_page_id_no_page_column_can_hold_is_no_page_and_the_notes_are_given(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result], last_page: int
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        chat, _, _ = seo_title_set(site, at=T0)
        chat.close()
        site.finish()
        connection.execute(
            schema.conversation.update()
            .where(schema.conversation.c.uid == chat.uid)
            .values(view_context=json.dumps({"pageId": 0, "lastPageId": last_page}))
        )

    result = run_cli("notes", str(chat.uid), "--db", installation_url, "--json")

    assert result.exit_code == 0, result.output
    assert [n for n in json.loads(result.stdout)["notes"] if "seo_title" in n["text"]]


def test_notes_and_record_read_a_chat_released_before_card_outcomes_as_one_without_them(
    empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    generate(empty_db_url, create_tables=init_installation, conversations=20, seed=3, now=NOW)
    engine = make_engine(empty_db_url)
    with engine.begin() as connection:  # DOMAIN.md: a later release of the chat adds the column
        connection.exec_driver_sql("ALTER TABLE tx_nrmcpagent_conversation DROP COLUMN card_outcomes")
    engine.dispose()

    notes = run_cli("notes", "1", "--db", empty_db_url, "--json")
    record = run_cli("record", "1", "--db", empty_db_url, "--json")

    assert notes.exit_code == 0, notes.stderr
    assert len([n for n in json.loads(notes.stdout)["notes"] if "Records written: pages:" in n["text"]]) == 6
    assert record.exit_code == 0, record.stderr


@on_sqlite_alone
def test_a_message_holding_a_lone_surrogate_escape_is_shown_with_a_replacement_character(
    empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    # "\ud800" alone is valid JSON and no character (core.json_text): printed as it reads, it stopped the
    # command with a UnicodeEncodeError.
    generate(empty_db_url, create_tables=init_installation, conversations=20, seed=3, now=NOW)
    m = schema.message.c
    engine = make_engine(empty_db_url)
    with engine.begin() as connection:
        connection.execute(
            schema.message.update()
            .where(m.conversation == 1, m.sorting == 1)
            .values(payload='{"role": "assistant", "content": "Titel \\ud800 gesetzt.", "runUuid": "x"}')
        )
    engine.dispose()

    for arguments in ((), ("--json",)):
        notes = run_cli("notes", "1", "--db", empty_db_url, *arguments)
        record = run_cli("record", "1", "--db", empty_db_url, *arguments)

        assert notes.exit_code == record.exit_code == 0, notes.stderr + record.stderr
    assert "Titel \ufffd gesetzt." in run_cli("notes", "1", "--db", empty_db_url).stdout  # the transcript


@on_sqlite_alone
def test_notes_of_a_conversation_that_does_not_exist_fail_in_one_line(
    installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli("notes", "4242", "--db", installation_url)

    assert result.exit_code == 1
    assert result.stderr == "runrecord: error: conversation 4242 does not exist\n"


def test_notes_and_record_work_on_every_conversation_the_generator_writes(empty_db_url: str) -> None:
    generate(empty_db_url, create_tables=init_installation, conversations=200, seed=21, now=NOW)
    engine = make_engine(empty_db_url)

    reports = []
    for uid in range(1, 201):
        conversation = load_conversation(engine, uid)
        rebuild_record(conversation)
        reports.append(
            next_turn_notes(
                conversation,
                own_transcript_skills=own_transcript_skills(),
                last_page_visible=last_page_visible(engine, conversation),
            )
        )
    engine.dispose()

    assert all(len(r.notes.notes) <= 40 for r in reports)
    assert all(sum(len(n.text) for n in r.notes.notes) <= 6000 for r in reports)
    assert sum(len(r.notes.notes) for r in reports) > 200


def test_the_generated_alt_text_conversation_gets_no_notes_and_says_that_its_transcript_confirms_the_write(
    empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    generate(empty_db_url, create_tables=init_installation, conversations=20, seed=3, now=NOW)
    last = str(20 + campaign_tours(20))  # after the SEO campaign's tours

    as_json = run_cli("notes", last, "--db", empty_db_url, "--json")
    as_text = run_cli("notes", last, "--db", empty_db_url)
    record = json.loads(run_cli("record", last, "--db", empty_db_url, "--json").stdout)

    assert as_json.exit_code == 0, as_json.output
    printed = json.loads(as_json.stdout)
    reason = OWN_TRANSCRIPT_REASON.format(skill=ALT_TEXT_SKILL)
    assert (printed["notes"], printed["no_notes_reason"]) == ([], reason)
    assert as_text.stdout.splitlines()[0] == f"conversation {last}: no notes. {reason}"
    assert [w["record"] for entry in record["stored"] for w in entry["writes"]] != []


@on_sqlite_alone
def test_the_notes_command_reads_which_skills_keep_their_own_transcript_from_the_setting(
    installation_engine: Engine,
    installation_url: str,
    run_cli: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Team", at=T0)
        chats = {}
        for skill in ("image-check", ALT_TEXT_SKILL):
            chat = site.conversation(configuration="content-assistant", skill=skill, at=T0, page=page)
            chat.user("Ergänze den Alt-Text.", at=T0)
            run = chat.run()
            run.propose("update_content", page, fields=("description",))
            run.approve()
            run.answer("Alt-Text gespeichert.")
            run.finish()
            chat.close()
            chats[skill] = chat.uid
        site.finish()
    monkeypatch.setenv("RUNRECORD_OWN_TRANSCRIPT_SKILLS", "image-check")

    configured = json.loads(
        run_cli("notes", str(chats["image-check"]), "--db", installation_url, "--json").stdout
    )
    other = json.loads(
        run_cli("notes", str(chats[ALT_TEXT_SKILL]), "--db", installation_url, "--json").stdout
    )

    assert configured["notes"] == [] and "(image-check)" in configured["no_notes_reason"]
    assert other["no_notes_reason"] is None
    assert [n for n in other["notes"] if f"Records written: pages:{page.uid}" in n["text"]]


@on_sqlite_alone
def test_a_malformed_own_transcript_setting_fails_the_notes_command_in_one_line(
    installation_url: str, run_cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNRECORD_OWN_TRANSCRIPT_SKILLS", "alt text")

    result = run_cli("notes", "1", "--db", installation_url)

    assert result.exit_code == 1
    assert result.stderr.startswith("runrecord: error: RUNRECORD_OWN_TRANSCRIPT_SKILLS='alt text' is not ")
    assert len(result.stderr.splitlines()) == 1
