"""A run's page (?run=<uuid>): its segments' record entries, the refused-call reading, each write with its
outcome, reason, edit scope and the history rows that decided it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect, select, update
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Dataframe, Table

from adapters import schema
from adapters.conversations import load_conversation
from adapters.database import make_engine, parse_url, sqlite_path
from core.formatting import outcome_label
from core.record_rebuild import rebuild_record
from core.record_text import describe
from core.row_parts import RowPart
from dashboard.queries.run import run_detail
from dashboard.queries.run_writes import DECIDED, EVIDENCE, NOT_RECORDED
from data.builder import Installation
from jobs.schema_setup import init_db
from tests.app import rendered
from tests.app.conftest import NOW
from tests.app.installations import DAY, WINDOW_S, planted_runs


def _run_with(url: str, outcome: str, edit_scope: str | None = None, *, decided_by_rows: bool = False) -> str:
    engine = make_engine(url)
    run, written = schema.agentrun.c, schema.write_outcome.c
    query = (
        select(run.uuid)
        .join_from(schema.agentrun, schema.write_outcome, written.run_uid == run.uid)
        .where(written.outcome == outcome)
        .order_by(run.uid)
    )
    if edit_scope is not None:
        query = query.where(written.edit_scope == edit_scope)
    if decided_by_rows:
        query = query.where(written.decided_by != "[]")
    with engine.connect() as connection:
        uuid = connection.execute(query.limit(1)).scalar_one()
    engine.dispose()
    return str(uuid)


def _with_declined_card(url: str) -> str:
    """A run whose card the editor declined with "Behalten" (keep the current value)."""
    engine = make_engine(url)
    c = schema.conversation.c
    with engine.connect() as connection:
        stored = connection.execute(
            select(c.card_outcomes).where(c.card_outcomes.like('%"Behalten"%'))
        ).scalars()
        outcomes = [o for text in stored for o in json.loads(text)]
    engine.dispose()
    return str(next(o["runUuid"] for o in outcomes if o["answer"] == "Behalten"))


def test_an_edited_write_shows_its_scope_and_the_history_rows_that_decided_it(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    uuid = _run_with(measured_db_url, "edited", "same_fields")

    app = dashboard(measured_db_url, page="run", query={"run": uuid})

    assert not app.exception
    assert app.subheader[0].value == f"Run {uuid[:8]}"
    tables = rendered.tables(app)
    writes = next(t for t in tables if "edit scope" in t.columns)
    assert "same fields (the AI's own fields)" in set(writes["edit scope"])
    history = [t for t in tables if "part" in t.columns]
    parts = {part for table in history for part in table["part"]}
    assert RowPart.EVIDENCE.value in parts and RowPart.DECIDED.value in parts
    assert all("userid" not in t.columns for t in tables)
    # The history rows are a static table, each row's part read whole (a grid cut it at its width).
    assert any("part" in node.value.columns for node in app.get("table") if isinstance(node, Table))


def test_a_declined_card_reads_as_its_answer_as_the_activity_list_shows_it(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    uuid = _with_declined_card(measured_db_url)

    app = dashboard(measured_db_url, page="run", query={"run": uuid})

    steps = [t for t in rendered.tables(app) if "activity list shows" in t.columns]
    shown = {(row["reading"], row["activity list shows"]) for t in steps for _, row in t.iterrows()}
    assert ("decision", "Behalten") in shown
    assert all(
        row["in the run record"] == "no"
        for t in steps
        for _, row in t.iterrows()
        if row["reading"] == "decision"
    )


def _declined_card_recorded_later(url: str, seconds: int) -> str:
    """A run whose card the editor declined with "Behalten", its card outcome stamped `seconds` after the
    approval event; the run's uuid."""
    engine = make_engine(url)
    t0 = int(NOW.timestamp()) - 2 * DAY
    try:
        init_db(engine, with_upstream=True)
        with engine.begin() as connection:
            site = Installation(connection)
            page = site.page("Produkte", at=t0 - DAY)
            chat = site.conversation(configuration="seo-assistant", at=t0, page=page)
            chat.user("Setze einen neuen Seitentitel.", at=t0)
            run = chat.run()
            run.say("Ich schlage als Seitentitel „Produkte aus Leipzig“ vor.")
            run.propose("update_page_seo", page, fields=("seo_title",))
            run.decline("Behalten", at=run.now + 20)
            run.answer("Der Seitentitel bleibt, wie er ist.")
            run.finish()
            chat.card_outcomes_override = json.dumps(
                [{**outcome, "at": outcome["at"] + seconds} for outcome in chat.card_outcomes]
            )
            chat.close()
            site.finish()
    finally:
        engine.dispose()
    return run.uuid


@pytest.fixture(scope="module")
def late_card(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(URL, run uuid): a declined card whose outcome is stamped 90 s after its approval event."""
    path: Path = tmp_path_factory.mktemp("late_card") / "late_card.sqlite"
    url = f"sqlite:///{path}"
    return url, _declined_card_recorded_later(url, 90)


def test_a_declined_card_recorded_90_s_after_its_approval_reads_the_same_in_the_activity_list_and_the_record(
    late_card: tuple[str, str],
) -> None:
    url, uuid = late_card
    engine = make_engine(url)

    detail = run_detail(
        engine,
        uuid,
        frozenset(inspect(engine).get_table_names()),
        now=int(NOW.timestamp()),
        window_s=WINDOW_S,
    )
    engine.dispose()

    declined = detail.segments[1]
    shown = [(step["reading"], step["activity list shows"]) for step in declined.steps]
    assert shown == [("decision", "Behalten")]
    assert declined.entry.decision is None  # the card outcome says "Behalten": the record matched it too


def test_the_run_page_shows_a_declined_cards_answer_recorded_90_s_after_its_approval(
    dashboard: Callable[..., AppTest], late_card: tuple[str, str]
) -> None:
    url, uuid = late_card

    app = dashboard(url, page="run", query={"run": uuid})

    assert not app.exception
    steps = [t for t in rendered.tables(app) if "activity list shows" in t.columns]
    shown = {(row["reading"], row["activity list shows"]) for t in steps for _, row in t.iterrows()}
    entries = [m.value for m in app.markdown if m.value.startswith("**Run record entry:**")]
    assert ("decision", "Behalten") in shown and ("decision", "abgelehnt") not in shown
    assert entries and not any("abgelehnt" in entry for entry in entries)


def test_the_run_page_shows_its_record_entries_per_segment(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    uuid = _run_with(measured_db_url, "accepted_unchanged")

    app = dashboard(measured_db_url, page="run", query={"run": uuid})

    entries = [m.value for m in app.markdown if m.value.startswith("**Run record entry:**")]
    assert entries and any("wrote " in entry for entry in entries)


def test_a_writes_outcome_reads_as_words_never_as_its_stored_key(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    uuid = _run_with(measured_db_url, "accepted_unchanged")

    app = dashboard(measured_db_url, page="run", query={"run": uuid})

    writes = next(t for t in rendered.tables(app) if "edit scope" in t.columns)
    assert set(writes["outcome"]) == {"accepted unchanged"}
    assert all("accepted_unchanged" not in expander.label for expander in app.expander)
    assert "accepted unchanged" in [text.value for text in app.text]  # the run's own tile
    assert all("accepted_unchanged" not in text.value for text in app.text)


def test_a_run_parameter_that_is_not_a_uuid_is_refused(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="run", query={"run": "1 OR 1=1"})

    assert not app.exception
    assert any("not a run uuid" in warning.value for warning in app.warning)


@pytest.mark.parametrize("reference", ["0067dba8------", "0067dba8a1b2", "0067dba8-a1b-2", "0067dba"])
def test_a_run_reference_without_the_uuids_hyphens_where_it_has_them_is_refused(
    dashboard: Callable[..., AppTest], measured_db_url: str, reference: str
) -> None:
    app = dashboard(measured_db_url, page="run", query={"run": reference})

    assert not app.exception
    assert [str(warning.value) for warning in app.warning] == ["?run= is not a run uuid; it was ignored"]


def test_a_short_id_several_runs_start_with_says_so_rather_than_that_no_run_has_it(
    dashboard: Callable[..., AppTest], measured_db_url: str, tmp_path: Path
) -> None:
    copy = tmp_path / "twins.sqlite"
    shutil.copy(str(sqlite_path(parse_url(measured_db_url))), copy)
    url = f"sqlite:///{copy}"
    engine = make_engine(url)
    with engine.begin() as connection:
        first, second = connection.execute(
            select(schema.agentrun.c.uuid).order_by(schema.agentrun.c.uid).limit(2)
        ).scalars()
        twin = first[:8] + second[8:]
        connection.execute(update(schema.agentrun).where(schema.agentrun.c.uuid == second).values(uuid=twin))
    engine.dispose()

    app = dashboard(url, page="run", query={"run": first[:8]})

    assert not app.exception
    assert [str(warning.value) for warning in app.warning] == [
        f"Several runs start with {first[:8]}: give more of the uuid, or find them on the Runs page."
    ]


def test_an_unknown_run_says_so(dashboard: Callable[..., AppTest], measured_db_url: str) -> None:
    app = dashboard(measured_db_url, page="run", query={"run": "00000000-0000-4000-8000-000000000000"})

    assert not app.exception
    assert any("There is no run 00000000" in warning.value for warning in app.warning)


def test_a_run_with_unreadable_write_targets_lists_them_as_unknown(
    dashboard: Callable[..., AppTest], bad_row_db: tuple[str, dict[str, int | str]]
) -> None:
    url, planted = bad_row_db

    app = dashboard(url, page="run", query={"run": str(planted["broken_run"])})

    assert not app.exception
    writes = next(t for t in rendered.tables(app) if "edit scope" in t.columns)
    assert any(record.startswith("unreadable target") for record in writes["record"])
    assert "unreadable_target" in set(writes["reason"])
    assert any("cannot be read" in warning.value for warning in app.warning)


def test_only_an_administrator_gets_the_link_to_the_run_s_conversation(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    uuid = _run_with(measured_db_url, "edited")

    product = dashboard(measured_db_url, page="run", query={"run": uuid})
    administrator = dashboard(measured_db_url, administrator=True, page="run", query={"run": uuid})

    def conversation_links(app: AppTest) -> list[str]:
        return [link.label for link in app.get("page_link") if link.label.startswith("Conversation")]

    assert conversation_links(product) == []
    assert len(conversation_links(administrator)) == 1


def test_the_entries_of_a_tour_run_are_those_runrecord_record_rebuilds(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    engine = make_engine(measured_db_url)
    report = rebuild_record(load_conversation(engine, 1))
    engine.dispose()
    tour = report.rebuilt[0].run_uuid

    app = dashboard(measured_db_url, page="run", query={"run": tour})

    shown = [
        m.value.removeprefix("**Run record entry:** ")
        for m in app.markdown
        if m.value.startswith("**Run record entry:**")
    ]
    assert shown == [describe(entry) for entry in report.rebuilt if entry.run_uuid == tour]
    assert not any("freigegeben" in entry for entry in shown)  # the cards' outcomes name the decisions


def _stored_decided_by(url: str, uuid: str) -> dict[int, str | None]:
    """The run's writes' decided_by column as derive-outcomes stored it, by tool_write event uid."""
    engine = make_engine(url)
    run, written = schema.agentrun.c, schema.write_outcome.c
    query = (
        select(written.event_uid, written.decided_by)
        .join_from(schema.write_outcome, schema.agentrun, written.run_uid == run.uid)
        .where(run.uuid == uuid)
    )
    with engine.connect() as connection:
        stored = {int(event_uid): decided for event_uid, decided in connection.execute(query)}
    engine.dispose()
    return stored


@pytest.mark.parametrize("outcome", ["edited", "discarded", "accepted_unchanged"])
def test_the_history_rows_marked_as_deciding_are_exactly_those_derive_outcomes_stored(
    measured_db_url: str, outcome: str
) -> None:
    uuid = _run_with(measured_db_url, outcome, decided_by_rows=True)
    stored = {uid: json.loads(text) for uid, text in _stored_decided_by(measured_db_url, uuid).items()}
    engine = make_engine(measured_db_url)
    tables = frozenset(inspect(engine).get_table_names())

    detail = run_detail(engine, uuid, tables, now=int(NOW.timestamp()), window_s=WINDOW_S)
    engine.dispose()

    assert any(stored[write.event_uid] for write in detail.writes)
    for write in detail.writes:
        marked = {row["history uid"] for row in write.history if row["part"] in (EVIDENCE, DECIDED)}
        assert marked == set(stored[write.event_uid])
        assert write.decided_by == (", ".join(str(uid) for uid in stored[write.event_uid]) or "none")


def test_a_write_derived_before_its_deciding_rows_were_stored_reads_not_recorded(
    dashboard: Callable[..., AppTest], measured_db_url: str, tmp_path: Path
) -> None:
    source = sqlite_path(parse_url(measured_db_url))
    assert source is not None
    shutil.copyfile(source, tmp_path / "before.sqlite")
    url = f"sqlite:///{tmp_path / 'before.sqlite'}"
    uuid = _run_with(url, "edited", "same_fields")
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(update(schema.write_outcome).values(decided_by=None))
    engine.dispose()

    app = dashboard(url, page="run", query={"run": uuid})

    assert not app.exception
    tables = rendered.tables(app)
    writes = next(t for t in tables if "edit scope" in t.columns)
    assert set(writes["decided by (history uids)"]) == {NOT_RECORDED}
    parts = {part for table in tables if "part" in table.columns for part in table["part"]}
    assert parts and not parts & {EVIDENCE, DECIDED}
    assert any("is not recorded" in info.value for info in app.info)


def test_a_problem_of_the_runs_conversation_is_shown_without_the_conversations_uid(
    dashboard: Callable[..., AppTest], measured_db_url: str, tmp_path: Path
) -> None:
    # The conversation's uid is the administrators' (its link is theirs alone): the product team reads the
    # problem, not which conversation it is.
    source = sqlite_path(parse_url(measured_db_url))
    assert source is not None
    shutil.copyfile(source, tmp_path / "cards.sqlite")
    url = f"sqlite:///{tmp_path / 'cards.sqlite'}"
    uuid = _with_declined_card(url)
    engine = make_engine(url)
    c = schema.conversation.c
    with engine.begin() as connection:
        uid, stored = connection.execute(
            select(c.uid, c.card_outcomes).where(c.card_outcomes.like(f'%"{uuid}"%'))
        ).one()
        entries = json.loads(stored)
        unreadable = json.dumps([*entries, "no card outcome"])
        connection.execute(update(schema.conversation).where(c.uid == uid).values(card_outcomes=unreadable))
    engine.dispose()

    app = dashboard(url, page="run", query={"run": uuid})

    assert not app.exception
    problems = [w.value for w in app.warning if w.value.startswith("its conversation")]
    assert problems == [f"its conversation: card_outcomes entry {len(entries)}: not an object"]


@pytest.fixture(scope="module")
def held_back(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(URL, run uuid): a run whose second round asks for translate_page, which the configuration's tool
    groups hold back (data/agent_run.py HELD_BACK_TOOLS), and nr-llm refuses the call."""
    url = f"sqlite:///{tmp_path_factory.mktemp('held_back') / 'held_back.sqlite'}"
    engine = make_engine(url)
    t0 = int(NOW.timestamp()) - 2 * DAY
    try:
        init_db(engine, with_upstream=True)
        with engine.begin() as connection:
            site = Installation(connection)
            chat = site.conversation(configuration="seo-assistant", at=t0)
            chat.user("Übersetze die Startseite.", at=t0)
            run = chat.run()
            run.llm("get_page")
            run.tool("get_page")
            run.llm("translate_page")
            run.tool("translate_page", ms=0.0, error=True)
            run.answer("Das Übersetzen ist für dich nicht freigegeben.")
            run.finish("failed", termination="policy_denied")
            chat.close()
            site.finish()
    finally:
        engine.dispose()
    return url, run.uuid


def _rounds(app: AppTest) -> list[dict[str, object]]:
    return [row for t in rendered.tables(app) if "offered" in t.columns for row in t.to_dict("records")]


def test_an_administrator_sees_what_each_round_was_offered_and_a_tool_asked_for_unoffered_is_marked(
    dashboard: Callable[..., AppTest], held_back: tuple[str, str]
) -> None:
    url, uuid = held_back

    app = dashboard(url, administrator=True, page="run", query={"run": uuid})

    assert not app.exception
    rounds = _rounds(app)
    assert [list(r["asked for"]) for r in rounds] == [["get_page"], ["translate_page (not offered)"], []]
    assert all("get_page" in r["offered"] and "translate_page" not in r["offered"] for r in rounds)
    assert [list(r["ran"]) for r in rounds] == [["get_page"], [], []]
    assert [list(r["refused without running"]) for r in rounds] == [[], ["translate_page"], []]
    assert [w.value for w in app.warning] == [
        "The model asked for tools its round did not offer: translate_page (segment 0, round 2)."
    ]


def test_the_product_team_does_not_see_the_offered_tools(
    dashboard: Callable[..., AppTest], held_back: tuple[str, str]
) -> None:
    url, uuid = held_back

    app = dashboard(url, page="run", query={"run": uuid})

    assert not app.exception and app.subheader[0].value == f"Run {uuid[:8]}"
    assert _rounds(app) == []
    assert "Model rounds" not in [h.value for h in app.header]
    assert "crm_push_draft" not in rendered.text(app)  # a remote tool the rounds offered
    assert not any("not offered" in w.value for w in app.warning)


def _tour(demo_db_url: str) -> dict[str, Any]:
    """Conversation 1's tour (000_…, "Context"): one run that writes one page in six segments."""
    return next(run for run in planted_runs(demo_db_url) if run["conversation"] == 1 and run["writes"])


def test_a_write_whose_window_is_still_open_says_it_has_no_outcome_yet_in_its_heading(
    dashboard: Callable[..., AppTest], demo_db_url: str, measured_db_url: str
) -> None:
    open_window = next(run for run in planted_runs(demo_db_url) if run["writes"] and not run["due"])

    app = dashboard(measured_db_url, page="run", query={"run": open_window["run"]})

    labels = [expander.label for expander in app.expander if expander.label.startswith("Write ")]
    assert labels and all(label.endswith(" — no outcome derived yet") for label in labels)


def test_the_run_header_shows_every_fact_in_full_as_wrapping_text_not_as_a_cut_metric(
    dashboard: Callable[..., AppTest], demo_db_url: str, measured_db_url: str
) -> None:
    tour = _tour(demo_db_url)

    app = dashboard(measured_db_url, page="run", query={"run": tour["run"]})

    assert not app.exception
    assert len(app.metric) == 0  # a metric's value is cut with "…" where it does not fit
    tiles = [t.value for t in app.text]
    assert tour["configuration"] in tiles and outcome_label(tour["outcome"]) in tiles and "7 days" in tiles


def test_each_write_s_expander_names_what_tells_it_from_the_others(
    dashboard: Callable[..., AppTest], demo_db_url: str, measured_db_url: str
) -> None:
    tour = _tour(demo_db_url)

    app = dashboard(measured_db_url, page="run", query={"run": tour["run"]})

    labels = [e.label for e in app.expander if e.label.startswith("Write ")]
    total = len(tour["writes"])
    assert len(labels) == total == len(set(labels))
    for index, (label, write) in enumerate(zip(labels, tour["writes"], strict=True), start=1):
        assert label.startswith(f"Write {index} of {total}: {write['record']}, continuation {index}, ")
        assert label.endswith(f"— {outcome_label(write['outcome'])}")


def test_a_step_s_round_is_the_model_round_that_asked_for_it_as_the_rounds_table_counts_it(
    dashboard: Callable[..., AppTest], demo_db_url: str, measured_db_url: str
) -> None:
    tour = _tour(demo_db_url)

    app = dashboard(measured_db_url, administrator=True, page="run", query={"run": tour["run"]})

    rounds = {(r["segment"], r["round"]): r for r in _rounds(app)}
    steps = [
        (int(title.label.split()[1].rstrip(",")), row)
        for title in app.expander
        if title.label.startswith("Segment ")
        for table in title.children.values()
        if isinstance(table, Dataframe)
        for row in table.value.to_dict("records")
    ]
    assert steps
    for segment, step in steps:
        asked = str(step["round"]).split(" (segment ")
        key = (int(asked[1].rstrip(")")) if len(asked) == 2 else segment, int(asked[0]))
        model_round = rounds[key]
        assert step["tool"] in [*model_round["ran"], *model_round["refused without running"]]
    assert any("(segment " in str(step["round"]) for _, step in steps)  # an approved call ran a segment later
