"""No page shows be_user, an editor's name or id, and nothing is grouped by editor (DESIGN.md, "Privacy").

The demo installation plants its editors as be_user ids 90001-90040 (and sys_history.userid the same); every
page is rendered on it in both roles, and everything on the screen — texts, tables, their column names,
charts — is searched for them. The queries themselves are checked too: none selects be_user or userid.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import pytest
from sqlalchemy import func, select
from streamlit.testing.v1 import AppTest

from adapters import schema
from adapters.database import make_engine
from dashboard.components import rates_tab
from dashboard.queries import rates
from data.story import EDITORS
from tests.app import rendered
from tests.app.conftest import clear_caches, recorded_statements, run_dashboard

# A planted id as a whole number: not part of a longer number, a uuid's hex run or a uid like 190012.
PLANTED = re.compile(r"(?<![0-9A-Za-z])(" + "|".join(str(editor) for editor in EDITORS) + r")(?![0-9A-Za-z])")
EDITOR_COLUMNS = {"be_user", "userid", "originaluserid", "decidedby", "submittedby", "editor"}
ADMINISTRATOR_PAGES = ("conversation", "health")


def _leaks(app: AppTest) -> list[str]:
    found = PLANTED.findall(rendered.text(app))
    columns = {str(c).lower() for table in rendered.tables(app) for c in table.columns}
    return found + sorted(columns & EDITOR_COLUMNS)


Dashboard = Callable[..., AppTest]


def _every_page(
    dashboard: Dashboard, url: str, conversations: list[int], runs: list[str]
) -> Iterator[tuple[str, AppTest]]:
    for tab in rates_tab.NAMES:
        yield f"rates, {tab}, product team", dashboard(url, page="rates", query={"tab": tab})
    yield "runs, product team", dashboard(url, page="runs")
    for uuid in runs:
        yield f"run {uuid[:8]}, product team", dashboard(url, page="run", query={"run": uuid})
        yield (
            f"run {uuid[:8]}, administrator",
            dashboard(url, administrator=True, page="run", query={"run": uuid}),
        )
    for tab in rates_tab.NAMES:
        yield (
            f"rates, {tab}, administrator",
            dashboard(url, administrator=True, page="rates", query={"tab": tab}),
        )
    for group in ("configuration", "skill"):
        yield f"rates split by {group}", dashboard(url, page="rates", query={"group": group, "range": "all"})
    yield "health, administrator", dashboard(url, administrator=True, page="health")
    yield "conversation list, administrator", dashboard(url, administrator=True, page="conversations")
    for uid in conversations:
        yield (
            f"conversation {uid}",
            dashboard(url, administrator=True, page="conversation", query={"conversation": str(uid)}),
        )


@dataclass(frozen=True)
class Walk:
    """Every page of the measured demo opened in both roles, from empty caches: what each page showed of
    the planted editors, and every statement the pages sent."""

    leaks: dict[str, list[str]]
    statements: list[str]


@pytest.fixture(scope="module")
def walk(measured_db_url: str) -> Iterator[Walk]:
    conversations, runs = _sample(measured_db_url)
    with pytest.MonkeyPatch.context() as monkeypatch, recorded_statements() as statements:
        clear_caches()
        pages = _every_page(partial(run_dashboard, monkeypatch), measured_db_url, conversations, runs)
        leaks = {name: _leaks(app) for name, app in pages}
    clear_caches()
    yield Walk(leaks, statements)


def _sample(url: str) -> tuple[list[int], list[str]]:
    """Conversations and runs to open: every tenth conversation, 1 and 2, and a run of each outcome."""
    engine = make_engine(url)
    c, r, o = schema.conversation.c, schema.agentrun.c, schema.run_outcome.c
    with engine.connect() as connection:
        conversations = [int(uid) for uid in connection.execute(select(c.uid).order_by(c.uid)).scalars()]
        runs = [
            str(
                connection.execute(
                    select(r.uuid)
                    .join_from(schema.agentrun, schema.run_outcome, o.run_uid == r.uid)
                    .where(o.outcome == outcome)
                    .limit(1)
                ).scalar_one()
            )
            for outcome in ("accepted_unchanged", "edited", "discarded", "unknown")
        ]
    engine.dispose()
    return [1, 2, *conversations[9::10]], runs


def test_the_demo_installation_plants_the_editors_this_test_looks_for(measured_db_url: str) -> None:
    engine = make_engine(measured_db_url)
    with engine.connect() as connection:
        planted = set(connection.execute(select(schema.conversation.c.be_user).distinct()).scalars())
        history = connection.execute(
            select(func.count()).where(schema.sys_history.c.userid.in_(EDITORS))
        ).scalar_one()
    engine.dispose()

    assert planted and planted <= set(EDITORS)
    assert history > 0
    assert PLANTED.findall(f"editor {EDITORS[3]} and uid 1{EDITORS[3]}") == [str(EDITORS[3])]


def test_no_page_shows_a_planted_editor_id_in_either_role(walk: Walk) -> None:
    assert len(walk.leaks) > 20
    assert {name: found for name, found in walk.leaks.items() if found} == {}


def test_no_page_shows_a_planted_editor_id_on_a_database_with_bad_rows(
    dashboard: Dashboard, bad_row_db: tuple[str, dict[str, int | str]]
) -> None:
    url, planted = bad_row_db
    conversations = [
        int(planted[k]) for k in ("broken_conversation", "stuck_conversation", "failed_conversation")
    ]

    leaks = {
        name: _leaks(app)
        for name, app in _every_page(dashboard, url, conversations, [str(planted["broken_run"])])
    }

    assert {name: found for name, found in leaks.items() if found} == {}


def test_no_query_of_any_page_selects_an_editor_column(walk: Walk) -> None:
    assert walk.statements
    assert [s for s in walk.statements if re.search(r"\b(be_user|userid|originaluserid)\b", s)] == []


def test_the_csv_download_names_no_editor(measured_db_url: str) -> None:
    engine = make_engine(measured_db_url)

    text = rates.aggregates_csv(engine)
    engine.dispose()

    assert PLANTED.findall(text) == []
    assert not EDITOR_COLUMNS & {name.lower() for name in text.splitlines()[0].split(",")}


def test_the_runs_inside_their_window_are_counted_by_configuration_and_skill_never_by_editor(
    measured_db_url: str,
) -> None:
    engine = make_engine(measured_db_url)
    r = schema.rate.c
    query = select(r.group_kind, r.group_value).where(r.metric == rates.WINDOW_OPEN_METRIC).distinct()
    with engine.connect() as connection:
        groups = [(str(kind), str(value)) for kind, value in connection.execute(query)]
    text = rates.aggregates_csv(engine)
    engine.dispose()

    assert groups and {kind for kind, _ in groups} == {"all", "configuration", "skill"}
    assert [value for _, value in groups if PLANTED.search(value)] == []
    assert rates.WINDOW_OPEN_METRIC in text and PLANTED.findall(text) == []
