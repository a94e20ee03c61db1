"""The derivation's queries use their indexes without statistics (installations rarely run ANALYZE).

The measured pitfalls: on SQLite without statistics, a history query ordered by tstamp makes the planner pick
the (tablename, tstamp) index and scan the table once per record — 1.1 s per write at 10,000,000 rows,
against 23 µs for the (tablename, recuid) lookup. The history query therefore has no ORDER BY and no
condition on tstamp. On PostgreSQL without statistics, `recuid = ANY(:uids)` (or an expanded IN list) is
answered by reading every row of the table name and filtering — 1.5 s for the history of 1,500 records among
2,000,000 rows against 12 ms — and a plain join of the due page with tx_nrllm_agentrun or the answered runs
hashes or sorts the whole table for every page: each key is looked up through a LATERAL subquery fenced with
OFFSET 0 there (adapters.dialect.plans.each_key), and every query here is checked with EXPLAIN.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from sqlalchemy import Connection, Engine, Select, func, inspect, select

from adapters import derivation as q
from adapters import history as history_queries
from adapters import outcomes, schema
from core.time import DAY_S
from data.builder import Installation

DAY = DAY_S
T = 1_790_000_000
PAGES = 200
EDITS = 40  # sys_history rows of each page: enough that a scan would cost far more than a lookup


@pytest.fixture
def site_engine(installation_engine: Engine) -> Iterator[Engine]:
    """PAGES pages, each written by a run and edited EDITS times by hand."""
    with installation_engine.begin() as connection:
        site = Installation(connection)
        for index in range(PAGES):
            page = site.page(f"Seite {index}", at=T - 60 * DAY)
            chat = site.conversation(configuration="content-assistant", at=T)
            chat.user("Bitte.", at=T)
            run = chat.run()
            run.propose("update_record", page, fields=("title",))
            run.approve(at=T + 10)
            run.finish()
            chat.close()
            for edit in range(EDITS):
                site.human_edit(page, {"description": f"{edit}"}, at=T - 50 * DAY + edit * 3600)
        site.finish()
    yield installation_engine


def _plan(connection: Connection, query: Select[object]) -> str:
    """The plan the database chooses for the query, as one text."""
    dialect = connection.dialect.name
    literal = query.compile(connection, compile_kwargs={"literal_binds": True}).string
    if dialect == "sqlite":
        return "\n".join(str(row[-1]) for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {literal}"))
    if dialect == "postgresql":
        return "\n".join(connection.exec_driver_sql(f"EXPLAIN {literal}").scalars())
    rows = connection.exec_driver_sql(f"EXPLAIN {literal}").mappings()
    return "\n".join(f"{row['table']} key={row['key']} type={row['type']}" for row in rows)


def _some_pages(connection: Connection) -> dict[str, set[int]]:
    uids = connection.execute(select(schema.pages.c.uid).order_by(schema.pages.c.uid).limit(3)).scalars()
    return {"pages": set(uids), "tt_content": {1, 2}}


def test_the_test_database_has_no_statistics(site_engine: Engine, dialect: str) -> None:
    if dialect != "sqlite":
        pytest.skip("only SQLite keeps its statistics in a table (sqlite_stat1) that ANALYZE creates")

    assert "sqlite_stat1" not in inspect(site_engine).get_table_names()


# guarded=False: PostgreSQL's direct cast of history_data, tried before the guarded function (cast_first).
@pytest.mark.parametrize("guarded", [True, False], ids=["guarded", "direct cast"])
def test_the_history_query_looks_records_up_by_tablename_and_recuid(
    site_engine: Engine, dialect: str, guarded: bool
) -> None:
    with site_engine.connect() as connection:
        query = history_queries.history_query(
            dialect, _some_pages(connection), keys_from=0, keys_to=T + 8 * DAY, guarded=guarded
        )

        plan = _plan(connection, query)

    assert "recordident_1" in plan, plan
    assert "recordident_2" not in plan, plan
    assert not re.search(r"SCAN sys_history|Seq Scan on sys_history|sys_history key=None", plan), plan
    if dialect == "postgresql":
        # One probe of (tablename, recuid) per record, both columns in the index condition: never the rows of
        # a table name filtered by uid.
        assert "Nested Loop" in plan, plan
        assert re.search(r"Index Cond: \(\(\(tablename\)::text = .*\) AND \(recuid = ", plan), plan
        assert "Bitmap Heap Scan on sys_history" not in plan, plan


def test_the_oldest_retained_row_is_found_through_an_index_a_table_name_at_a_time(
    site_engine: Engine, dialect: str
) -> None:
    history = schema.sys_history
    next_name = select(func.min(history.c.tablename)).where(history.c.tablename > "pages")
    oldest_of = select(func.min(history.c.tstamp)).where(history.c.tablename == "pages")

    with site_engine.connect() as connection:
        plans = [_plan(connection, next_name), _plan(connection, oldest_of)]
        oldest = history_queries.oldest_retained_tstamp(connection)
        plain = connection.execute(select(func.min(history.c.tstamp))).scalar()

    assert oldest == plain
    for plan in plans:
        assert not re.search(r"SCAN sys_history$|Seq Scan on sys_history|sys_history key=None", plan, re.M), (
            plan
        )


def test_presence_is_a_primary_key_lookup(site_engine: Engine, dialect: str) -> None:
    with site_engine.connect() as connection:
        pages = history_queries.TableCatalog(connection).get("pages")
        assert pages is not None and pages.has_deleted

        if dialect == "postgresql":
            # A table of a few pages is cheaper to read whole, and PostgreSQL rightly does so; what must
            # hold at any size is that the lookup can use the primary key.
            connection.exec_driver_sql("SET enable_seqscan = off")
        plan = _plan(connection, history_queries.presence_query(dialect, pages, [1, 2, 3]))
        if dialect == "postgresql":
            connection.exec_driver_sql("RESET enable_seqscan")

    assert not re.search(r"SCAN pages$|Seq Scan on pages|pages key=None", plan, re.M), plan


def test_due_runs_writes_and_ai_writes_use_the_write_target_indexes(
    site_engine: Engine, dialect: str
) -> None:
    if dialect != "sqlite":
        pytest.skip("the write targets are a temporary table the job analyzes itself on PostgreSQL")
    with site_engine.begin() as connection:
        q.create_write_targets(connection)
        plans = {
            "due": _plan(connection, q.due_runs_query(dialect, after=0, cutoff=T, limit=10)),
            "ai": _plan(connection, history_queries.ai_write_times_query(dialect, {"pages": {1, 2, 3}})),
            "writes": _plan(connection, q.batch_writes_query(dialect, [1, 2, 3])),
        }
        q.drop_write_targets(connection)

    assert "tx_runrecord_write_target_run" in plans["due"], plans["due"]
    assert "SCAN tx_runrecord_run_outcome" not in plans["due"], plans["due"]
    assert "tx_runrecord_write_target_record" in plans["ai"], plans["ai"]
    assert "SEARCH tx_runrecord_write_target USING INDEX tx_runrecord_write_target_run" in plans["writes"], (
        plans["writes"]
    )


def test_on_postgresql_every_batch_lookup_is_one_index_probe_per_key(
    site_engine: Engine, dialect: str
) -> None:
    if dialect != "postgresql":
        pytest.skip("the LATERAL lookups are PostgreSQL's (SQLite and MariaDB: the tests above and below)")
    with site_engine.begin() as connection:
        q.create_write_targets(connection)
        plans = {"due": _plan(connection, q.due_runs_query(dialect, after=0, cutoff=T + 8 * DAY, limit=10))}
        # The tables here are a few pages, cheaper to read whole at each probe, and PostgreSQL rightly does
        # so; what must hold at any size is that each key is its own probe and can use the index.
        connection.exec_driver_sql("SET enable_seqscan = off")
        plans["writes"] = _plan(connection, q.batch_writes_query(dialect, [1, 2, 3]))
        plans["ai"] = _plan(
            connection, history_queries.ai_write_times_query(dialect, _some_pages(connection))
        )
        plans["observed"] = _plan(connection, outcomes.observed_query(dialect, ["a", "b"]))
        plans["presence"] = _plan(
            connection,
            history_queries.presence_query(dialect, history_queries.RecordTable("pages", True, True), [1]),
        )
        connection.exec_driver_sql("RESET enable_seqscan")
        q.drop_write_targets(connection)

    # The page: each candidate run probes the answered runs' unique index (a SubPlan, not a hash of the
    # table) and its run row by primary key (a nested loop, not a sort of tx_nrllm_agentrun).
    assert re.search(r"SubPlan.*\n.*Index Only Scan using tx_runrecord_run_outcome_run", plans["due"]), plans[
        "due"
    ]
    assert "Index Scan using tx_nrllm_agentrun_pkey" in plans["due"], plans["due"]
    assert not re.search(r"Seq Scan on tx_nrllm_agentrun|Seq Scan on tx_runrecord_run_outcome", plans["due"])
    for name, index in (
        ("writes", "tx_runrecord_write_target_run"),
        ("ai", "tx_runrecord_write_target_record"),
        ("observed", "correlation"),
        ("presence", "pages_pkey"),
    ):
        assert "Nested Loop" in plans[name] and index in plans[name], (name, plans[name])


def test_on_mariadb_and_sqlite_every_batch_lookup_uses_an_index(site_engine: Engine, dialect: str) -> None:
    if dialect == "postgresql":
        pytest.skip("PostgreSQL: the test above")
    with site_engine.begin() as connection:
        q.create_write_targets(connection)
        plans = {
            "writes": _plan(connection, q.batch_writes_query(dialect, [1, 2, 3])),
            "ai": _plan(connection, history_queries.ai_write_times_query(dialect, _some_pages(connection))),
            "observed": _plan(connection, outcomes.observed_query(dialect, ["a", "b"])),
        }
        q.drop_write_targets(connection)

    expected = {"writes": "tx_runrecord_write_target_run", "ai": "tx_runrecord_write_target_record"}
    expected["observed"] = "correlation"
    for name, index in expected.items():
        assert index in plans[name], (name, plans[name])
        assert not re.search(r"SCAN tx_|key=None", plans[name].replace("SCAN json_each", "")), (
            name,
            plans[name],
        )


def test_the_planners_choice_holds_after_analyze_too(site_engine: Engine, dialect: str) -> None:
    with site_engine.begin() as connection:
        statement = {
            "sqlite": "ANALYZE",
            "postgresql": "ANALYZE sys_history",
            "mariadb": "ANALYZE TABLE sys_history",
        }
        connection.exec_driver_sql(statement[dialect])
        if dialect == "sqlite":
            connection.commit()
    try:
        with site_engine.connect() as connection:
            plan = _plan(
                connection,
                history_queries.history_query(dialect, _some_pages(connection), keys_from=0, keys_to=T),
            )
    finally:
        if dialect == "sqlite":  # the session's database is shared: leave it without statistics again
            with site_engine.begin() as connection:
                connection.exec_driver_sql("DROP TABLE IF EXISTS sqlite_stat1")

    assert "recordident_1" in plan, plan
