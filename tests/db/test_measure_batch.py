"""measure-rates' batch (adapters.measure_batch) on SQLite, MariaDB and PostgreSQL: which texts leave the
database for the text rules, which waits are read, and how the batch's events are read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, event, insert, select

from adapters import schema
from adapters.dialect import bulk, plans
from adapters.measure_batch import UidRange, measure_batch, scratch, waits
from core.time import DAY_S
from data.agent_run import Run
from data.builder import Installation
from data.chat import Conversation

T = int(datetime(2026, 10, 5, 9, tzinfo=UTC).timestamp())


@contextmanager
def batch(engine: Engine) -> Iterator[Connection]:
    """One batch of every conversation measured, its scratch tables left as the batch filled them, on a
    connection whose transaction is rolled back afterwards."""
    with engine.connect() as connection, connection.begin():
        scratch.create(connection)
        measure_batch(connection, UidRange(0, 2**31 - 1), now=T + 30 * DAY_S)
        yield connection
        connection.rollback()


def waiting_turn(site: Installation, at: int, said: str) -> tuple[Conversation, Run]:
    """A turn whose proposal waits ten minutes for the editor's approval; `said` is stored as sent two
    minutes into the wait."""
    page = site.page("Neuigkeiten", at=at - 30 * DAY_S)
    chat = site.conversation(configuration="content-assistant", page=page, at=at)
    chat.user("Lege eine Unterseite an.", at=at)
    run = chat.run()
    run.propose("create_page_draft", page, fields=("title",))
    proposed = run.now
    run.approve(at=proposed + 600)
    chat.user(said, at=proposed + 120)
    run.answer("Die Seite wurde angelegt.")
    run.finish()
    return chat, run


def test_only_the_user_messages_a_waiting_runs_events_span_are_handed_to_the_go_on_rule(
    installation_engine: Engine,
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        chat, run = waiting_turn(site, T, "weiter")
        chat.user("Danke, passt.", at=run.now + 3_600)  # after the run ended: no wait can hold it
        chat.close()
        site.finish()

    with batch(installation_engine) as connection:
        texts = [text for _, text in waits.go_on_texts(connection)]

    assert texts == ["weiter"]  # neither the request before the run's first event nor the thanks after


def test_the_waits_are_read_only_for_conversations_with_a_go_on_or_an_unreadable_user_message(
    installation_engine: Engine,
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        going, going_run = waiting_turn(site, T, "weiter")
        going.close()
        noting, _ = waiting_turn(site, T + DAY_S, "Bitte auch die Vorschau prüfen.")
        noting.close()
        site.finish()

    with batch(installation_engine) as connection:
        said = connection.execute(select(scratch.go_on.c.message_uid)).scalars().all()
        u = scratch.user.c
        waited = set(connection.execute(select(scratch.wait.c.run_uid)).scalars())
        placed = connection.execute(select(u.inside_run).where(u.message_uid.in_(said))).scalars().all()

        assert waited == {going_run.uid}
        assert placed == [going_run.uid]


def _count_plans(connection: Connection, uids: list[int]) -> str:
    """The plan of the statement that counts the batch's events, as the database explains it."""
    seen: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if statement.startswith("INSERT INTO tx_runrecord_m_count ("):
            seen.append((statement, parameters))

    event.listen(connection, "before_cursor_execute", keep)
    try:
        measure_batch(connection, uids, now=T + 30 * DAY_S)
    finally:
        event.remove(connection, "before_cursor_execute", keep)
    statement, parameters = seen[-1]
    if connection.dialect.name == "sqlite":
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
        return "\n".join(str(row[-1]) for row in rows)
    if connection.dialect.name == "postgresql":
        rows = connection.exec_driver_sql(f"EXPLAIN {statement}", parameters)
        return "\n".join(str(row[0]) for row in rows)
    explained = connection.exec_driver_sql(f"EXPLAIN {statement}", parameters).mappings()
    return "\n".join(f"{row['table']} key={row['key']} type={row['type']}" for row in explained)


def test_a_uuid_two_runs_share_names_the_first_of_them(installation_engine: Engine) -> None:
    # core.answers: the runs a conversation names, the first of each uuid (measure_reference reads the same).
    run_table = schema.agentrun
    with installation_engine.begin() as connection:
        site = Installation(connection)
        chat = site.conversation(configuration="content-assistant", at=T)
        chat.user("Fasse die Seite zusammen.", at=T)
        run = chat.run()
        run.answer("Die Seite beschreibt das Angebot.")
        run.finish()
        chat.close()
        site.finish()
    with installation_engine.begin() as connection:
        row = connection.execute(select(run_table).where(run_table.c.uid == run.uid)).one()._asdict()
        connection.execute(insert(run_table).values({**row, "uid": run.uid + 1_000}))
        bulk.after_explicit_uids(connection, (run_table,))

    with batch(installation_engine) as connection:
        runs = connection.execute(select(scratch.run.c.uid, scratch.run.c.uuid)).all()

    assert [tuple(found) for found in runs] == [(run.uid, row["uuid"])]


@pytest.mark.parametrize("together", [True, False], ids=["events together", "events far apart"])
def test_the_batchs_events_are_read_as_one_uid_range_where_they_lie_together_and_run_by_run_elsewhere(
    installation_engine: Engine, dialect: str, together: bool
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        chats = []
        for index in range(12):  # the middle ones' events lie between the first and the last one's
            chat, _ = waiting_turn(site, T + index * DAY_S, "weiter")
            chat.close()
            chats.append(chat)
        site.finish()
    chosen = [chat.uid for chat in chats] if together else [chats[0].uid, chats[-1].uid]

    with installation_engine.connect() as connection, connection.begin():
        scratch.create(connection)
        plan = _count_plans(connection, chosen)
        connection.rollback()

    if dialect == "mariadb" and together:
        assert plans.reads_key_ranges(dialect)
        assert "tx_nrllm_agentrun_event key=PRIMARY type=range" in plan
    elif dialect == "mariadb":
        assert "tx_nrllm_agentrun_event key=run_sequence type=ref" in plan, plan
    elif dialect == "postgresql":
        # Each run's events probed, whatever the statistics: never a read of every event (the wide shape's
        # twelfth batch at 0.5 read 3.5 million for 210,000).
        assert re.search(r"(?:Index Scan using|Bitmap Index Scan on) run_sequence\b", plan), plan
        assert "Index Cond: (run = tx_runrecord_m_run.uid)" in plan, plan
        assert "Seq Scan on tx_nrllm_agentrun_event" not in plan, plan
    else:
        assert "SEARCH tx_nrllm_agentrun_event USING INDEX run_sequence (run=?)" in plan
