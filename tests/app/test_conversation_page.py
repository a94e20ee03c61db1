"""The Conversation page (administrators): the transcript as the reader saw it, notices in the reader's
language, the error per reader, the stored record beside the rebuilt one, the notes the next turn gets."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from streamlit.testing.v1 import AppTest

from adapters import schema
from adapters.conversations import load_conversation
from adapters.database import make_engine
from core.answer_readings import read_answers
from core.notes import OWN_TRANSCRIPT_REASON
from core.run_record import Ended, RunRecordEntry, ToolUse
from dashboard import url_state
from dashboard.components.transcript import READING
from dashboard.queries import conversations
from dashboard.queries.conversations import RECENT_PAGE
from data.builder import Installation
from data.own_transcript import ALT_TEXT_SKILL
from jobs.schema_setup import init_db
from tests.app import rendered
from tests.app.conftest import NOW, SMALL_DEMO_CONVERSATIONS
from tests.app.installations import DAY, planted_runs


def _conversation_with(url: str, pattern: str) -> int:
    engine = make_engine(url)
    m = schema.message.c
    with engine.connect() as connection:
        uid = connection.execute(
            select(m.conversation).where(m.payload.like(pattern)).order_by(m.conversation).limit(1)
        ).scalar_one()
    engine.dispose()
    return int(uid)


def _conversation_of_skill(url: str, skill: str) -> int:
    engine = make_engine(url)
    c = schema.conversation.c
    with engine.connect() as connection:
        uid = connection.execute(select(c.uid).where(c.skill_identifier == skill)).scalar_one()
    engine.dispose()
    return int(uid)


def _open(dashboard: Callable[..., AppTest], url: str, uid: int | str) -> AppTest:
    return dashboard(url, administrator=True, page="conversation", query={"conversation": str(uid)})


def test_conversation_1_gives_the_next_turn_six_written_records(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = _open(dashboard, measured_db_url, 1)

    assert not app.exception
    summary = next(m.value for m in app.markdown if "written records" in m.value)
    assert summary.startswith("**6 written records** in the notes")
    notes = [code.value for code in app.code]
    assert sum("Records written: pages:" in note for note in notes) == 6
    assert all(note.startswith("[Chat record — written by the chat from the run") for note in notes)


def test_a_card_outcome_reads_in_the_reader_s_language_only(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = _open(dashboard, measured_db_url, 1)

    german = _cards(app)
    app.selectbox(key="language").select("en").run()
    english = _cards(app)

    assert len(german) == 6 and all(card.endswith("Übernehmen — übernommen") for card in german)
    assert all("Karte update_page_seo für pages:" in card for card in german)
    assert len(english) == 6 and all(card.endswith("Apply — approved") for card in english)
    assert not any("Übernehmen" in card or "Karte" in card for card in english)


def _cards(app: AppTest) -> list[str]:
    return [m.value for m in app.markdown if "update_page_seo" in m.value and "task_alt" in m.value]


def test_the_record_table_shows_only_the_entries_that_differ_unless_asked_for_every_entry(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = _open(dashboard, measured_db_url, 1)

    differing = [t.value for t in app.table]
    app.toggle(key="record_every").set_value(True).run()
    every = app.table[0].value

    assert any("agree (8 entries)" in s.value for s in app.success)
    assert differing == []  # the two agree: no entry differs
    assert len(every) == 8 and set(every["difference"]) == {""}
    assert set(every.columns) >= {"stored", "rebuilt from events"}


def test_a_nothing_saved_notice_reads_in_the_reader_s_language(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    uid = _conversation_with(measured_db_url, '%"notice":"nothingSaved"%')
    app = _open(dashboard, measured_db_url, uid)

    german = [w.value for w in app.warning]
    app.selectbox(key="language").select("en").run()
    english = [w.value for w in app.warning]

    assert "In diesem Schritt wurde nichts gespeichert" in german
    assert "Nothing was saved in this step" in english


def test_a_run_finished_outside_notice_names_the_records_the_chat_stored_in_its_list(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    uid = _conversation_with(measured_db_url, '%"notice":"runFinishedOutside"%')
    engine = make_engine(measured_db_url)
    m = schema.message.c
    try:
        with engine.connect() as connection:
            stored = connection.execute(
                select(m.payload).where(m.conversation == uid, m.payload.like('%"runFinishedOutside"%'))
            ).scalar_one()
    finally:
        engine.dispose()
    records = json.loads(stored)["noticeArgs"]
    app = _open(dashboard, measured_db_url, uid)
    app.selectbox(key="language").select("en").run()

    assert isinstance(records, list) and records  # as the chat stores them
    assert f"Decided and finished outside the chat. Saved: {', '.join(records)}" in [
        w.value for w in app.warning
    ]


def test_an_error_is_shown_as_an_administrator_and_as_an_editor_sees_it(
    dashboard: Callable[..., AppTest], bad_row_db: tuple[str, dict[str, int | str]]
) -> None:
    url, planted = bad_row_db

    app = _open(dashboard, url, planted["failed_conversation"])

    errors = [e.value for e in app.error]
    assert "API key identifier is required for provider OpenAI" in errors
    assert (
        "Der KI-Anbieter des Chats ist nicht eingerichtet. Bitte wende dich an die Administration." in errors
    )
    assert any("LLM › Anbieter" in caption.value for caption in app.caption)


def test_a_stuck_conversation_is_warned_about(
    dashboard: Callable[..., AppTest], bad_row_db: tuple[str, dict[str, int | str]]
) -> None:
    url, planted = bad_row_db

    app = _open(dashboard, url, planted["stuck_conversation"])

    assert any(e.value.startswith("This conversation is stuck: processing since") for e in app.error)


def test_a_conversation_with_unreadable_columns_names_them_and_shows_the_rest(
    dashboard: Callable[..., AppTest], bad_row_db: tuple[str, dict[str, int | str]]
) -> None:
    url, planted = bad_row_db

    app = _open(dashboard, url, planted["broken_conversation"])

    assert not app.exception
    problems = [w.value for w in app.warning if w.value.startswith("Cannot be read:")]
    assert any("run_record" in p for p in problems) and any("card_outcomes" in p for p in problems)
    assert any("payload_not_json" in p for p in problems)
    assert len(app.chat_message) > 0
    # Its answer cannot be told to deny or not (the run record is unreadable): the line above the
    # transcript says so, and gives no clean verdict.
    assert "Whether it denies earlier writes cannot be told" in " ".join(_marks(app))
    summary = " ".join(m.value for m in app.markdown if m.value.startswith("**runrecord's reading**"))
    assert "cannot be told to deny recorded writes or not" in summary
    assert not any("denies no recorded writes" in c.value for c in app.caption)


def test_a_conversation_parameter_that_is_not_a_uid_is_refused(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = _open(dashboard, measured_db_url, "1; DROP TABLE x")

    assert not app.exception
    assert any("not a conversation uid" in w.value for w in app.warning)


@pytest.mark.parametrize("uid", ["4294967296", "9999999999"])
def test_a_conversation_uid_beyond_what_a_typo3_table_holds_is_refused(
    dashboard: Callable[..., AppTest], measured_db_url: str, uid: str
) -> None:
    app = _open(dashboard, measured_db_url, uid)

    assert not app.exception
    assert any("not a conversation uid" in w.value for w in app.warning)
    assert app.number_input(key="conversation_uid").max == url_state.MAX_UID


def test_an_unknown_conversation_says_so(dashboard: Callable[..., AppTest], measured_db_url: str) -> None:
    app = _open(dashboard, measured_db_url, 99_999)

    assert any("There is no conversation 99999" in w.value for w in app.warning)


def test_the_conversations_page_lists_the_newest_conversations(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, administrator=True, page="conversations")

    listed = rendered.tables(app)[0]
    newest = SMALL_DEMO_CONVERSATIONS
    assert list(listed["conversation"])[:3] == [newest, newest - 1, newest - 2]
    assert "be_user" not in listed.columns


def test_a_conversation_opened_again_after_the_list_shows_again(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, administrator=True, page="conversation", query={"conversation": "1"})
    app.switch_page("views/conversations.py").run()

    app.query_params["conversation"] = "1"
    app.switch_page("views/conversation.py").run()

    assert not app.exception
    assert app.query_params["conversation"] == "1"
    assert "Run record: stored and rebuilt from events" in [h.value for h in app.header]


def test_the_conversation_page_without_a_uid_links_to_the_list_of_conversations(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, administrator=True, page="conversation")

    assert not app.exception and rendered.tables(app) == []
    links = [link.proto for link in app.get("page_link")]
    assert [(link.label, link.page) for link in links] == [("The newest conversations", "conversations")]


def test_the_conversation_page_says_what_to_do_on_a_database_without_tables(
    dashboard: Callable[..., AppTest], empty_sqlite_url: str
) -> None:
    app = dashboard(empty_sqlite_url, administrator=True, page="conversation")

    assert not app.exception
    assert "runrecord init-db" in app.info[0].value


def test_a_conversation_whose_transcript_is_its_own_shows_that_it_gets_no_notes_and_why(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    uid = _conversation_of_skill(measured_db_url, ALT_TEXT_SKILL)

    app = _open(dashboard, measured_db_url, uid)

    assert not app.exception
    assert OWN_TRANSCRIPT_REASON.format(skill=ALT_TEXT_SKILL) in [i.value for i in app.info]
    assert [code.value for code in app.code] == []
    assert not any("written records" in m.value for m in app.markdown)
    assert any("Alt-Text gespeichert" in t.value for t in app.text)


def test_the_conversation_page_reads_which_skills_keep_their_own_transcript_from_the_setting(
    dashboard: Callable[..., AppTest], measured_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    uid = _conversation_of_skill(measured_db_url, ALT_TEXT_SKILL)
    monkeypatch.setenv("RUNRECORD_OWN_TRANSCRIPT_SKILLS", "image-check")

    app = _open(dashboard, measured_db_url, uid)

    assert not app.exception
    summary = next(m.value for m in app.markdown if "written records" in m.value)
    assert summary.startswith("**1 written records** in the notes")


def _planted(demo_db_url: str, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first run the demo generator planted so (its manifest), with its conversation."""
    return next(run for run in planted_runs(demo_db_url) if wanted(run))


def _marks(app: AppTest) -> list[str]:
    return [e.value for e in [*app.error, *app.warning, *app.info] if e.value.startswith(f"**{READING}:**")]


def test_an_answer_claiming_a_change_its_run_did_not_write_is_marked_though_no_notice_was_stored(
    dashboard: Callable[..., AppTest], demo_db_url: str, measured_db_url: str
) -> None:
    planted = _planted(demo_db_url, lambda run: run["claims_unwritten"] and run["answer"]["notice"] is None)

    app = _open(dashboard, measured_db_url, planted["conversation"])

    assert not app.exception
    claims = [m for m in _marks(app) if "Claims a change its run did not write" in m]
    unwritten = "Claims a change its run did not write. The chat stored no nothingSaved notice for it."
    assert claims == [f"**{READING}:** {unwritten}"]
    assert not any("nichts gespeichert" in w.value for w in app.warning)  # the reader saw no notice
    assert any("1 answer claims a change its run did not write" in m.value for m in app.markdown)


def test_a_stored_notice_the_recomputation_does_not_give_is_flagged(
    dashboard: Callable[..., AppTest], demo_db_url: str, measured_db_url: str
) -> None:
    planted = _planted(demo_db_url, lambda run: run["notice_disagrees"])

    app = _open(dashboard, measured_db_url, planted["conversation"])

    assert not app.exception
    assert "In diesem Schritt wurde nichts gespeichert" in [w.value for w in app.warning]
    flagged = [m for m in _marks(app) if "disagrees with the recomputation" in m]
    assert len(flagged) == 1 and "has no claim word" in flagged[0]
    assert not any("Claims a change" in m for m in _marks(app))


def test_an_answer_denying_recorded_writes_shows_how_many_and_of_which_segments(
    dashboard: Callable[..., AppTest], demo_db_url: str, measured_db_url: str
) -> None:
    tour = _planted(demo_db_url, lambda run: run["conversation"] == 1 and run["writes"])
    continuations = "continuations " + ", ".join(
        str(segment) for segment in range(1, len(tour["writes"]) + 1)
    )

    app = _open(dashboard, measured_db_url, 1)

    (denial,) = [m for m in _marks(app) if "Denies" in m]
    records = sorted({write["record"] for write in tour["writes"]})
    assert denial == (
        f"**{READING}:** Denies {len(tour['writes'])} recorded writes: run {tour['run'][:8]} {continuations} "
        f"({', '.join(records)})."
    )


def test_the_next_turn_tab_lists_the_notes_each_turn_was_given(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = _open(dashboard, measured_db_url, 1)

    given = [e for e in app.expander if e.label.endswith("notes this turn was given")]

    # Conversation 1's question turn came after the tour: it was given the tour's seven entries (six with a
    # write) and its six card outcomes; the tour's own turn came first and was given none.
    (question,) = given
    notes = [t.value for t in question.text]
    assert question.label == f"The {len(notes)} notes this turn was given"
    assert sum("Records written: pages:" in note for note in notes) == 6
    assert sum("Card for update_page_seo" in note for note in notes) == 6
    assert any("was given no notes by ADR-030" in i.value for i in app.info)


def test_the_reader_s_language_is_kept_in_the_url_and_a_link_with_it_opens_in_it(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = _open(dashboard, measured_db_url, 1)

    app.selectbox(key="language").select("en").run()
    kept = app.query_params.get("language")
    app.selectbox(key="language").select("de").run()
    default = app.query_params.get("language")
    linked = dashboard(
        measured_db_url,
        administrator=True,
        page="conversation",
        query={"conversation": "1", "language": "en"},
    )

    assert kept in ("en", ["en"])
    assert default is None  # the default language needs no parameter
    assert linked.selectbox(key="language").value == "en"
    assert all(card.endswith("Apply — approved") for card in _cards(linked))


def test_a_language_parameter_that_is_not_offered_is_refused(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(
        measured_db_url,
        administrator=True,
        page="conversation",
        query={"conversation": "1", "language": "fr"},
    )

    assert not app.exception
    assert any("?language= is not one of de, en" in w.value for w in app.warning)
    assert app.selectbox(key="language").value == "de"


def test_the_page_reads_every_completed_answer_as_measure_rates_counted_it(measured_db_url: str) -> None:
    engine = make_engine(measured_db_url)
    f, r = schema.measure_fact.c, schema.agentrun.c
    with engine.connect() as connection:
        facts = connection.execute(
            select(r.uuid, f.conversation_uid, f.claim, f.denial, f.notice)
            .join_from(schema.measure_fact, schema.agentrun, r.uid == f.run_uid)
            .where(f.answer == "read")
        ).all()
    counted = {(row.conversation_uid, row.uuid): (row.claim, row.denial, bool(row.notice)) for row in facts}

    read = {}
    for uid in sorted({conversation for conversation, _ in counted}):
        for reading in read_answers(load_conversation(engine, uid)):
            read[(uid, reading.run_uuid)] = (reading.claim.value, reading.denial.value, reading.notice_stored)
    engine.dispose()

    assert len(counted) > 200 and read == counted


@pytest.fixture(scope="module")
def differing_record(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int]:
    """(URL, conversation uid): a run that wrote in its continuation, and a stored run record whose entry of
    that continuation lists no write."""
    url = f"sqlite:///{tmp_path_factory.mktemp('differing') / 'differing.sqlite'}"
    engine = make_engine(url)
    t0 = int(NOW.timestamp()) - 2 * DAY
    try:
        init_db(engine, with_upstream=True)
        with engine.begin() as connection:
            site = Installation(connection)
            page = site.page("Team", at=t0 - 30 * DAY)
            chat = site.conversation(configuration="content-assistant", at=t0, page=page)
            chat.user("Setze einen neuen Seitentitel.", at=t0)
            run = chat.run()
            run.propose("update_page_seo", page, fields=("seo_title",))
            run.approve(at=run.now + 30)
            run.answer("Der Seitentitel ist gespeichert.")
            run.finish()
            entries = run.planted_entries()
            entries[-1]["writes"] = []
            chat.run_record_override = json.dumps(entries)
            chat.close()
            site.finish()
    finally:
        engine.dispose()
    return url, chat.uid


def test_the_record_table_shows_the_entry_that_differs_in_full_and_every_entry_on_request(
    dashboard: Callable[..., AppTest], differing_record: tuple[str, int]
) -> None:
    url, uid = differing_record

    app = _open(dashboard, url, uid)
    (differing,) = [t.value for t in app.table]
    app.toggle(key="record_every").set_value(True).run()
    every = app.table[0].value

    assert "The stored record and the events differ in 1 entry." in [w.value for w in app.warning]
    assert any(", 1 run, " in caption.value for caption in app.caption)
    assert list(differing["difference"]) == ["differs: writes"]
    assert (
        "pages:" in differing["rebuilt from events"].iloc[0] and "pages:" not in differing["stored"].iloc[0]
    )
    assert len(every) == 2 and sorted(every["difference"]) == ["", "differs: writes"]


def test_a_conversation_without_a_completed_answer_says_there_is_nothing_to_read(
    dashboard: Callable[..., AppTest], bad_row_db: tuple[str, dict[str, int | str]]
) -> None:
    url, planted = bad_row_db

    app = _open(dashboard, url, planted["stuck_conversation"])

    assert "runrecord's reading: no run of this conversation gave a completed answer." in [
        c.value for c in app.caption
    ]
    assert _marks(app) == []


@pytest.mark.parametrize(
    ("changes", "cell"),
    [
        (
            {"ended": Ended.WAITING, "waiting": ("update_page_seo", "ask_choice")},
            "waiting: update_page_seo, ask_choice",
        ),
        (
            {"ended": Ended.WAITING, "tools": (ToolUse("get_page", 1, 0),), "waiting": ("update_page_seo",)},
            "waiting: tools get_page×1; waiting: update_page_seo",
        ),
        ({}, "completed: nothing ran, was written or decided"),
    ],
)
def test_a_record_cell_says_how_the_entry_ended_once(changes: dict[str, Any], cell: str) -> None:
    entry = replace(RunRecordEntry("run-a", 0, 1, 0, Ended.COMPLETED), **changes)

    assert conversations.entry_words(entry) == cell


def test_the_conversation_list_says_which_page_of_how_many_it_shows_of_those_not_deleted(
    dashboard: Callable[..., AppTest], measured_db_url: str, tmp_path: Path
) -> None:
    copy = tmp_path / "deleted.sqlite"
    shutil.copy(make_url(measured_db_url).database or "", copy)
    url = f"sqlite:///{copy}"
    engine = make_engine(url)
    c = schema.conversation.c
    with engine.begin() as connection:  # 30 soft-deleted, as TYPO3 deletes: the list leaves them out
        deleted = select(c.uid).order_by(c.uid).limit(30).scalar_subquery()
        connection.execute(schema.conversation.update().where(c.uid.in_(deleted)).values(deleted=1))
    app = dashboard(url, administrator=True, page="conversations")
    first = [m.value for m in app.markdown if m.value.startswith("Page ")]
    app.button(key="recent_older").click().run()
    second = [m.value for m in app.markdown if m.value.startswith("Page ")]

    assert not app.exception
    with engine.connect() as connection:
        total = connection.execute(select(func.count()).where(c.deleted == 0)).scalar_one()
    engine.dispose()
    pages = -(-total // RECENT_PAGE)
    assert pages > 1
    assert first == [f"Page 1 of {pages} · {total:,} conversations"]
    assert second == [f"Page 2 of {pages} · {total:,} conversations"]
