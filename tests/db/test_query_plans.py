"""The derivation's and the measurement's queries use their indexes without statistics (installations rarely
run ANALYZE).

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
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import (
    Connection,
    Engine,
    MetaData,
    Select,
    Table,
    event,
    func,
    insert,
    inspect,
    select,
    update,
)

from adapters import derive_batch, schema, tallies, write_targets
from adapters import history as history_queries
from adapters.dialect import bulk
from adapters.dialect import session as sqlsession
from adapters.dialect.days import day_of
from adapters.first_notice import first_notice_at
from adapters.measure_batch import UidRange, measure_batch, scratch
from adapters.measure_marks import source_marks
from adapters.measure_since import changes_since
from core.outcomes import CallOutcome, EditScope
from core.periods import Grain, period_start, unix_of
from core.time import DAY_S
from data.builder import Installation
from jobs.derive import Summary, derive_outcomes
from jobs.measure import MAX_TOUCHED, RESCAN_MARGIN_S, measure_rates
from tests.db.conftest import VERSION_TABLE, empty_installation

DAY = DAY_S
T = 1_790_000_000
PAGES = 200
EDITS = 40  # sys_history rows of each page: enough that a scan would cost far more than a lookup
FINISHED_RUNS = 20_000  # runs an installation has finished: enough that reading them all costs
ANALYZE = {"sqlite": "ANALYZE", "postgresql": "ANALYZE", "mariadb": "ANALYZE TABLE"}


def _build_site(engine: Engine) -> None:
    """PAGES pages, each written by a run and edited EDITS times by hand."""
    with engine.begin() as connection:
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
        # Backend users (the _cli_ user among them), and rows that name a run in their correlation_id: the
        # look-ups of automation and named runs read the installation's indexes too.
        users = [{"uid": uid, "username": f"editor{uid}"} for uid in range(1, 50)]
        connection.execute(insert(schema.be_users), [*users, {"uid": 99, "username": "_cli_"}])
        uuids = connection.execute(select(schema.agentrun.c.uuid).limit(20)).scalars().all()
        h = schema.sys_history
        for index, uuid in enumerate(uuids):
            connection.execute(
                update(h).where(h.c.uid == index + 1).values(correlation_id=f"0400${uuid}:{'0' * 32}")
            )


@pytest.fixture(scope="module")
def _site_rows(_installation: Engine) -> list[tuple[Table, list[dict[str, Any]]]]:
    """The site built once per dialect, as the rows of every table that holds any."""
    _build_site(empty_installation(_installation))
    metadata = MetaData()
    with _installation.connect() as connection:
        metadata.reflect(connection)
        rows = [
            (table, [dict(row._mapping) for row in connection.execute(select(table))])
            for name, table in sorted(metadata.tables.items())
            if name != VERSION_TABLE
        ]
    return [(table, found) for table, found in rows if found]


@pytest.fixture
def site_engine(installation_engine: Engine, _site_rows: list[tuple[Table, list[dict[str, Any]]]]) -> Engine:
    """The site (_build_site) on an installation of its own: the tests change it, and ANALYZE it."""
    with installation_engine.begin() as connection:
        for table, rows in _site_rows:
            connection.execute(table.insert(), rows)
    return installation_engine


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
    with site_engine.connect() as connection:
        with _explaining(connection, dialect) as explained:
            oldest = history_queries.oldest_retained_tstamp(connection)
        names = connection.execute(select(func.count(history.c.tablename.distinct()))).scalar_one()
        plain = connection.execute(select(func.min(history.c.tstamp))).scalar()

    assert oldest == plain
    # For each table name the next name and its oldest row, then the name after the last.
    assert names > 0 and len(explained) == 2 * names + 1
    scans = [
        (statement, plan) for statement, plan in explained if _full_scans(plan, dialect, ("sys_history",))
    ]
    assert not scans, "\n\n".join(f"{statement}\n{plan}" for statement, plan in scans)


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


# Tables no statement of derive-outcomes may read whole: the installation's, and ours that grow with it.
# (The batch tables are the batch's own rows; the pending runs are what a night has to look at.)
NEVER_SCANNED = (
    "sys_history",
    "be_users",
    "tx_nrllm_agentrun_event",
    "tx_nrllm_agentrun",
    "tx_nrllm_call_outcome",
    "tx_runrecord_write_target",
    "tx_runrecord_run_outcome",
    "tx_runrecord_write_outcome",
    "pages",
    "tt_content",
)


def _aliased_tables(statement: str) -> dict[str, str]:
    """The tables the statement reads under another name (`FROM tx_nrllm_agentrun AS earlier`), by that name:
    SQLite's and MariaDB's plans name a table by its alias, PostgreSQL's by both."""
    found = re.findall(r"(?:FROM|JOIN)\s+(\w+)\s+AS\s+(\w+)", statement)
    return {alias: name for name, alias in found if alias != name}


def _explained(
    connection: Any, cursor: Any, statement: str, parameters: Any, dialect: str, *, as_chosen: bool = False
) -> str:
    """The statement's plan, every table named by its own name (an alias resolved) on SQLite and MariaDB."""
    aliases = _aliased_tables(statement)
    if dialect == "sqlite":
        cursor.execute(f"EXPLAIN QUERY PLAN {statement}", parameters)
        lines = (str(row[-1]) for row in cursor.fetchall())
        named = re.compile(r"^(SCAN|SEARCH) (\w+)\b")
        return "\n".join(named.sub(lambda m: f"{m[1]} {aliases.get(m[2], m[2])}", line) for line in lines)
    if dialect == "postgresql":
        # The tables here are small, cheaper to read whole, and PostgreSQL rightly does so; what must hold at
        # any size is that every lookup can use an index. `as_chosen`: the plan its planner chooses.
        if not as_chosen:
            cursor.execute("SET enable_seqscan = off")
        cursor.execute(f"EXPLAIN {statement}", parameters)
        plan = "\n".join(str(row[0]) for row in cursor.fetchall())
        if not as_chosen:
            cursor.execute("RESET enable_seqscan")
        return plan
    cursor.execute(f"EXPLAIN {statement}", parameters)
    names = [column[0] for column in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return "\n".join(
        f"{aliases.get(row['table'], row['table'])} key={row['key']} type={row['type']} "
        f"select={row['select_type']} extra={row['Extra']}"
        for row in rows
    )


def _full_scans(plan: str, dialect: str, never: tuple[str, ...] = NEVER_SCANNED) -> list[str]:
    if dialect == "sqlite":
        # An automatic index is built from a read of the whole table.
        pattern = r"^(?:SCAN ({0})(?: |$)|SEARCH ({0}) USING AUTOMATIC)"
    elif dialect == "postgresql":
        pattern = r"Seq Scan on ({})(?: |$)"
    else:
        pattern = r"^({}) key=None type=ALL"
    found = re.findall(pattern.format("|".join(never)), plan.replace("->", "").strip(), re.M)
    lines = [line.strip().lstrip("-> ") for line in plan.splitlines()]
    found += re.findall(pattern.format("|".join(never)), "\n".join(lines), re.M)
    return found + (_unbounded_index_scans(plan, never) if dialect == "postgresql" else [])


def test_a_table_read_whole_under_another_name_is_a_full_scan_of_it() -> None:
    # SQLite's plan names a table by its alias; the check reads the alias as the table it stands for.
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE tx_nrllm_agentrun (uid INTEGER PRIMARY KEY, uuid TEXT)")
    statement = "SELECT earlier.uid FROM tx_nrllm_agentrun AS earlier WHERE earlier.uuid = ?"
    try:
        plan = _explained(connection, connection.cursor(), statement, ("x",), "sqlite")
    finally:
        connection.close()

    assert plan == "SCAN tx_nrllm_agentrun"
    assert {name for name, _ in _full_scans(plan, "sqlite")} == {"tx_nrllm_agentrun"}


def _unbounded_index_scans(plan: str, never: tuple[str, ...]) -> list[str]:
    """PostgreSQL: the tables an index scan reads whole, with no Index Cond and no Limit above it. With
    sequential scans off (as `_explained` plans) a hash join reads the table it hashes that way instead."""
    node = re.compile(r"Index (?:Only )?Scan (?:Backward )?using \w+ on ({})(?: |$)".format("|".join(never)))
    lines = plan.splitlines()
    found = []
    for at, line in enumerate(lines):
        scan = node.search(line)
        if not scan:
            continue
        indent = len(line) - len(line.lstrip())
        above = [earlier for earlier in lines[:at] if len(earlier) - len(earlier.lstrip()) < indent]
        if above and "Limit" in above[-1]:
            continue
        if not any(detail.startswith("Index Cond:") for detail in _node_details(lines, at)):
            found.append(scan.group(1))
    return found


def _node_details(lines: list[str], at: int) -> list[str]:
    """PostgreSQL: the detail lines of the plan node on line `at` ("Index Cond: …"), up to its first child."""
    indent = len(lines[at]) - len(lines[at].lstrip())
    details = []
    for below in lines[at + 1 :]:
        if len(below) - len(below.lstrip()) <= indent or "->" in below or ":" not in below:
            break
        details.append(below.strip())
    return details


@contextmanager
def _explaining(
    target: Engine | Connection, dialect: str, *, as_chosen: bool = False
) -> Iterator[list[tuple[str, str]]]:
    """The plan of every statement run on `target` while inside, with the statement."""
    explained: list[tuple[str, str]] = []

    def explain(
        connection: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool
    ) -> None:
        words = statement.lstrip().split(None, 1)
        if many or not words or words[0].upper() not in ("SELECT", "INSERT", "UPDATE", "DELETE"):
            return
        plan = _explained(connection, cursor, statement, parameters, dialect, as_chosen=as_chosen)
        explained.append((statement, plan))

    event.listen(target, "before_cursor_execute", explain)
    try:
        yield explained
    finally:
        event.remove(target, "before_cursor_execute", explain)


def _derive_explained(
    engine: Engine, dialect: str, *, as_chosen: bool = False
) -> tuple[Summary, list[tuple[str, str]]]:
    """derive-outcomes run once, with the plan of every statement it ran."""
    with _explaining(engine, dialect, as_chosen=as_chosen) as explained:
        summary = derive_outcomes(engine, now=T + 30 * DAY, window_s=7 * DAY)
    return summary, explained


def test_no_statement_of_derive_outcomes_reads_a_growing_table_whole(
    site_engine: Engine, dialect: str
) -> None:
    summary, explained = _derive_explained(site_engine, dialect)

    assert summary.writes_derived == PAGES
    leading = _leading_columns(site_engine, NEVER_SCANNED)
    scans = [
        (statement, plan)
        for statement, plan in explained
        if _full_scans(plan, dialect) or _off_key_index_reads(plan, dialect, leading)
    ]
    assert not scans, "\n\n".join(f"{statement}\n{plan}" for statement, plan in scans)


# nr-llm's KEY correlation (correlation_id) of tx_nrllm_call_outcome, as each dialect's plan names it.
CORRELATION_INDEX = {
    "sqlite": r"SEARCH \w+ USING INDEX correlation \(correlation_id=\?\)",
    "postgresql": r"(?:Index Scan using|Bitmap Index Scan on) correlation\b",
    "mariadb": r"tx_nrllm_call_outcome key=correlation type=ref",
}


def test_the_mirror_looks_a_runs_observed_row_up_by_nr_llms_correlation_index(
    site_engine: Engine, dialect: str
) -> None:
    with site_engine.begin() as connection:
        # Statistics taken while the table was empty, as on an installation whose first night mirrors more
        # rows than nr-llm ever wrote: the probe must still go by correlation id alone.
        analyze = "ANALYZE TABLE" if dialect == "mariadb" else "ANALYZE"
        connection.exec_driver_sql(f"{analyze} tx_nrllm_call_outcome")
    with site_engine.begin() as connection:
        # Other runs' rows, rated and observed, so that the table holds what an installation's does.
        rows = [
            (0, f"00000000-0000-4000-8000-{n:012d}", ("helpful", "edited", "unknown")[n % 3], T, T)
            for n in range(3000)
        ]
        columns = ("pid", "correlation_id", "outcome", "crdate", "tstamp")
        bulk.insert_rows(connection, schema.call_outcome, columns, rows)

    summary, explained = _derive_explained(site_engine, dialect)

    mirror = [plan for statement, plan in explained if "INTO tx_runrecord_batch_mirror" in statement]
    assert summary.mirrored == PAGES
    assert len(mirror) == 1, explained
    assert re.search(CORRELATION_INDEX[dialect], mirror[0]), mirror[0]
    assert "outcome_lookup" not in mirror[0], mirror[0]


# A statement's plan reading the table (not only inserting into it), as each dialect names it.
READS_TABLE = {
    "sqlite": r"^(?:SCAN|SEARCH) {table}\b",
    "postgresql": r"(?:Scan|Scan using \w+) on {table}\b|Bitmap Index Scan on {table}_",
    "mariadb": r"^{table} key=",
}


def test_a_first_night_reads_the_targets_from_the_events_alone_whatever_the_statistics_say(
    site_engine: Engine, dialect: str
) -> None:
    if dialect != "sqlite":
        with site_engine.begin() as connection:
            # Statistics taken while the table was empty, as a database-wide ANALYZE leaves them before the
            # first night: a look-up in the table being filled read every row inserted so far again for each
            # event on PostgreSQL (11.7 s for 50,000 targets, quadratic in their number).
            analyze = "ANALYZE TABLE" if dialect == "mariadb" else "ANALYZE"
            connection.exec_driver_sql(f"{analyze} tx_runrecord_write_target")

    summary, explained = _derive_explained(site_engine, dialect)

    filling = [plan for statement, plan in explained if "INTO tx_runrecord_write_target" in statement]
    reads = READS_TABLE[dialect].format(table=schema.write_target.name)
    assert summary.writes_derived == PAGES
    assert filling, explained
    assert not [plan for plan in filling if re.search(reads, plan, re.M)], filling


def test_sqlite_lists_a_writes_deciders_in_the_order_of_the_windows_key_without_sorting_them(
    site_engine: Engine, dialect: str
) -> None:
    # SQLite's group_concat (before 3.44) keeps the order in which its rows come: the window's rows must come
    # through its (write, uid) key, write by write, and nothing may sort them on the way.
    if dialect != "sqlite":
        pytest.skip("the other engines order the uids inside their aggregate")

    summary, explained = _derive_explained(site_engine, dialect)

    listing = [plan for statement, plan in explained if "INTO tx_runrecord_batch_decided" in statement]
    assert summary.writes_derived == PAGES
    assert listing, explained
    for plan in listing:
        assert re.search(r"^(?:SEARCH|SCAN) tx_runrecord_batch_window USING PRIMARY KEY", plan, re.M), plan
        assert "TEMP B-TREE" not in plan, plan


@pytest.mark.parametrize("rows_a_record", ["many", "few"])
def test_mariadb_seeks_a_windows_rows_as_a_range_for_each_write_only_where_a_record_holds_many_rows(
    site_engine: Engine, dialect: str, rows_a_record: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each site page holds more than EDITS rows that may count. Read by the record's key (`ref`), a hot
    # record's rows are read whole for every write of it; sought as a range, each write costs a range check.
    if dialect != "mariadb":
        pytest.skip("the other engines seek a window's rows one way")
    if rows_a_record == "few":
        monkeypatch.setattr(derive_batch, "WHOLE_RECORD_ROWS", EDITS + 10)

    summary, explained = _derive_explained(site_engine, dialect)

    reading = [
        line
        for statement, plan in explained
        if "INTO tx_runrecord_batch_window " in statement
        for line in plan.splitlines()
        if line.startswith("tx_runrecord_batch_countable ")
    ]
    by_key = [line for line in reading if "key=tx_runrecord_batch_countable_floor type=ref" in line]
    ranged = [line for line in reading if "type=ALL" in line and "Range checked for each record" in line]
    assert summary.writes_derived == PAGES
    assert len(by_key) == 1, reading
    # The long records' writes in a statement of their own; the others' statement finds none.
    assert len(ranged) == (1 if rows_a_record == "many" else 0), reading
    assert len(reading) == len(by_key) + len(ranged), reading


# nr-llm's keys a night reads the runs not finished, and the events of those finished since, through.
STATUS_INDEX = {
    "sqlite": r"SEARCH tx_nrllm_agentrun USING (?:COVERING )?INDEX status_lookup \(status=\?\)",
    "postgresql": r"(?:Index Only Scan using|Index Scan using|Bitmap Index Scan on) status_lookup\b",
    "mariadb": r"tx_nrllm_agentrun key=status_lookup type=(?:ref|range)",
}
RUN_INDEX = {
    "sqlite": r"SEARCH tx_nrllm_agentrun_event USING INDEX run_sequence \(run=\?\)",
    "postgresql": r"(?:Index Scan using|Bitmap Index Scan on) run_sequence\b",
    "mariadb": r"tx_nrllm_agentrun_event key=run_sequence type=(?:ref|range)",
}


# The night's overlap below the last mark in the tests of a night's plans: fewer than the site's events.
FEW_LATE_EVENTS = 20


def test_a_night_reads_the_runs_not_finished_and_then_their_events_through_nr_llms_keys(
    site_engine: Engine, dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A night's range of new events starting above the first uid, as on an installation with more events
    # than LATE_EVENTS: from uid 0 every target is new, and reading them all is no defect.
    monkeypatch.setattr(write_targets, "LATE_EVENTS", FEW_LATE_EVENTS)
    with site_engine.begin() as connection:
        running = select(schema.agentrun.c.uid).order_by(schema.agentrun.c.uid).limit(3).subquery()
        connection.execute(
            schema.agentrun.update()
            .where(schema.agentrun.c.uid.in_(select(running.c.uid)))
            .values(status="running")
        )
    _, first = _derive_explained(site_engine, dialect)
    with site_engine.begin() as connection:
        connection.execute(schema.agentrun.update().values(status="completed"))

    summary, second = _derive_explained(site_engine, dialect)

    keep = [plan for statement, plan in first if "INTO tx_runrecord_unfinished_run" in statement]
    by_run = [
        plan
        for statement, plan in second
        if "INTO tx_runrecord_write_target" in statement and re.search(RUN_INDEX[dialect], plan)
    ]
    assert summary.writes_derived == 3
    assert keep and all(re.search(STATUS_INDEX[dialect], plan) for plan in keep), keep
    assert by_run, "\n\n".join(plan for _, plan in second)
    scans = [(statement, plan) for statement, plan in first + second if _full_scans(plan, dialect)]
    assert not scans, "\n\n".join(f"{statement}\n{plan}" for statement, plan in scans)


def test_a_night_reads_the_runs_not_finished_through_nr_llms_key_where_nearly_every_run_has_completed(
    site_engine: Engine, dialect: str
) -> None:
    # An installation's statistics, in which one status covers nearly every run: a lookup planned once for
    # any status (a LATERAL per value) read the whole table for each of the four statuses on PostgreSQL,
    # a night's fixed cost growing with every run the installation ever had (4 x 33,611 runs, measured).
    # Here every run has completed, as on the installation it was measured on.
    run = schema.agentrun
    with site_engine.begin() as connection:
        first = connection.execute(select(func.max(run.c.uid))).scalar_one() + 1
        done = [
            (uid, f"00000000-0000-4000-8000-{uid:012d}", "completed", "content-assistant", T, T)
            for uid in range(first, first + FINISHED_RUNS)
        ]
        columns = ("uid", "uuid", "status", "configuration_identifier", "crdate", "tstamp")
        bulk.insert_rows(connection, run, columns, done)
        connection.execute(run.update().values(status="completed"))
        connection.exec_driver_sql(f"{ANALYZE[dialect]} {run.name}")
        if dialect == "sqlite":
            connection.commit()

    _, explained = _derive_explained(site_engine, dialect, as_chosen=True)

    keep = [plan for statement, plan in explained if "INTO tx_runrecord_unfinished_run" in statement]
    assert keep and all(re.search(STATUS_INDEX[dialect], plan) for plan in keep), keep
    assert not [plan for plan in keep if _full_scans(plan, dialect, (run.name,))], keep


def _asks_a_subquery_per_row(plan: str, dialect: str) -> bool:
    """Whether the plan asks a subquery again for each row it reads, as the dialect's plan says so (a
    PostgreSQL SubPlan that is hashed is built once)."""
    if dialect == "sqlite":
        return "CORRELATED" in plan
    if dialect == "postgresql":
        return "SubPlan" in plan and "hashed SubPlan" not in plan
    return "select=DEPENDENT SUBQUERY" in plan


def test_pending_rows_are_forgotten_by_their_runs_never_by_a_subquery_asked_of_each_pending_run(
    site_engine: Engine, dialect: str
) -> None:
    # Every run pending (none due yet), as on an installation whose runs of the last week wait for their
    # windows to close. MariaDB asked `IN (SELECT …)` of a DELETE again for every pending run: a night read
    # its new targets each time (0.24 s for 1,049 pending runs and 11,000 targets, measured), and each batch
    # looked every pending run up in its runs.
    first = derive_outcomes(site_engine, now=T, window_s=7 * DAY)

    summary, explained = _derive_explained(site_engine, dialect)

    forgetting = {
        table: [
            plan
            for statement, plan in explained
            if statement.lstrip().upper().startswith("DELETE FROM TX_RUNRECORD_PENDING_RUN")
            and table in statement
        ]
        for table in ("tx_runrecord_write_target", "tx_runrecord_batch_run")
    }
    assert (first.writes_derived, summary.writes_derived) == (0, PAGES)
    assert all(forgetting.values()), "\n\n".join(statement for statement, _ in explained)
    per_row = [
        plan for found in forgetting.values() for plan in found if _asks_a_subquery_per_row(plan, dialect)
    ]
    assert not per_row, per_row


def test_a_nights_pending_rows_read_each_new_runs_targets_through_their_run_index(
    site_engine: Engine, dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Asked as `run_uid IN (…)` of the new targets, MariaDB answered with a loose scan of the whole run index,
    # every target of the installation (153,183 entries at the wide shape's 0.15, measured).
    monkeypatch.setattr(write_targets, "LATE_EVENTS", FEW_LATE_EVENTS)
    derive_outcomes(site_engine, now=T + 30 * DAY, window_s=7 * DAY)

    _, explained = _derive_explained(site_engine, dialect)

    pending = [
        plan
        for statement, plan in explained
        if "INTO tx_runrecord_pending_run" in statement and "tx_runrecord_write_target" in statement
    ]
    assert pending, "\n\n".join(statement for statement, _ in explained)
    whole = _reading_the_targets_whole(pending, dialect)
    assert not whole, whole


def test_a_nights_overlap_below_the_mark_looks_each_event_up_in_the_targets_by_its_key(
    site_engine: Engine, dialect: str
) -> None:
    # The LATE_EVENTS uids below the last night's mark were read then: each is looked up in the targets by
    # its key. Asked as NOT EXISTS, MariaDB read every target's key instead at the fanout shape's 0.05 (17 ms
    # a night, growing with the targets); on this small site it probes either way, so this pins the probe on
    # each dialect, not that choice.
    derive_outcomes(site_engine, now=T + 30 * DAY, window_s=7 * DAY)
    with site_engine.begin() as connection:
        analyze = "ANALYZE TABLE" if dialect == "mariadb" else "ANALYZE"
        connection.exec_driver_sql(f"{analyze} tx_runrecord_write_target")

    _, explained = _derive_explained(site_engine, dialect)

    overlap = [plan for statement, plan in explained if "overlap" in statement]
    assert overlap, "\n\n".join(statement for statement, _ in explained)
    whole = _reading_the_targets_whole(overlap, dialect)
    assert not whole, whole


def _reading_the_targets_whole(found: list[str], dialect: str) -> list[str]:
    """The plans that read our targets table whole, or its whole index (it grows with every tool_write)."""
    table = ("tx_runrecord_write_target",)
    return [plan for plan in found if _full_scans(plan, dialect, table) or _whole_index(plan, dialect, table)]


# Tables no statement of a measure-rates batch may read whole: the installation's chat and run tables and the
# stored facts, which grow with it. (The scratch tables hold the batch's own rows.)
MEASURE_NEVER_SCANNED = (
    "tx_nrmcpagent_conversation",
    "tx_nrmcpagent_message",
    "tx_nrllm_agentrun",
    "tx_nrllm_agentrun_event",
    "tx_runrecord_measure_fact",
)


@pytest.mark.parametrize(
    "batch", ["a uid range", "changed conversations", "a later batch"], ids=lambda batch: batch
)
def test_no_statement_of_a_measure_rates_batch_reads_a_growing_table_whole(
    site_engine: Engine, dialect: str, batch: str
) -> None:
    measure_rates(site_engine, now=T + 30 * DAY, window_s=7 * DAY)  # the stored facts a batch compares with
    with site_engine.connect() as connection, connection.begin():
        scratch.create(connection)
        first = connection.execute(select(func.min(schema.conversation.c.uid))).scalar_one()
        scope: UidRange | list[int] = UidRange(first - 1, first + 20)
        if batch == "changed conversations":
            scope = [first, first + 1]
        if batch == "a later batch":
            # Planned with the statistics the job's first batch took (scratch.analyze), not its own.
            measure_batch(connection, scope, now=T + 30 * DAY)
            scratch.statistics_taken(connection)
            scope = UidRange(first + 20, first + 41)
        with _explaining(connection, dialect) as explained:
            result = measure_batch(connection, scope, now=T + 30 * DAY)
        connection.rollback()

    assert result.conversations == (2 if batch == "changed conversations" else 21)
    leading = _leading_columns(site_engine, MEASURE_NEVER_SCANNED)
    scans = [
        (statement, plan)
        for statement, plan in explained
        if _full_scans(plan, dialect, MEASURE_NEVER_SCANNED)
        or _whole_index(plan, dialect)
        or _off_key_index_reads(plan, dialect, leading)
    ]
    assert not scans, "\n\n".join(f"{statement}\n{plan}" for statement, plan in scans)


def _conversations_with_records_after(engine: Engine, first_batch: int, total: int) -> None:
    """`total` conversations, each with runs that write a page and finish; of the first `first_batch` only the
    first stores a run record, with the entries of its eight runs."""
    with engine.begin() as connection:
        site = Installation(connection)
        for index in range(total):
            chat = site.conversation(configuration="content-assistant", at=T + index)
            chat.stores_run_record = index >= first_batch or index == 0
            for turn in range(8 if index == 0 else 1):
                page = site.page(f"Seite {index}.{turn}", at=T - 60 * DAY)
                chat.user("Bitte.", at=T + index)
                run = chat.run()
                run.propose("update_record", page, fields=("title",))
                run.approve(at=T + index + 10)
                run.finish()
                chat.assistant("Erledigt.", at=T + index + 20, run=run)
            chat.close()
        site.finish()


def test_a_later_batch_reads_the_run_record_entries_by_conversation_though_the_first_batch_had_few(
    installation_engine: Engine, dialect: str
) -> None:
    # The oldest conversations stored no run record but one: the first batch's statistics count a few
    # entries, all of one conversation, and SQLite planned a later batch's answers with a read of every entry
    # for each answer (adapters.dialect.session.BatchStatistics).
    first_batch, total = 10, 10 + 3 * sqlsession.STALE_ROWS
    _conversations_with_records_after(installation_engine, first_batch, total)
    with installation_engine.connect() as connection, connection.begin():
        scratch.create(connection)
        first = connection.execute(select(func.min(schema.conversation.c.uid))).scalar_one()
        measure_batch(connection, UidRange(first - 1, first - 1 + first_batch), now=T + 30 * DAY)
        scratch.statistics_taken(connection)
        with _explaining(connection, dialect) as explained:
            result = measure_batch(
                connection, UidRange(first - 1 + first_batch, first - 1 + total), now=T + 30 * DAY
            )
        connection.rollback()

    assert result.answers == total - first_batch
    answers = [
        plan for statement, plan in explained if statement.startswith("INSERT INTO tx_runrecord_m_answer")
    ]
    assert len(answers) == 1
    assert not _full_scans(answers[0], dialect, ("tx_runrecord_m_entry",)), answers[0]


def test_a_rerun_finds_the_conversations_of_new_messages_through_the_message_key(
    site_engine: Engine, dialect: str
) -> None:
    measure_rates(site_engine, now=T + 30 * DAY, window_s=7 * DAY)
    with site_engine.begin() as connection:
        marks = source_marks(connection)
        scratch.create(connection)
        with _explaining(connection, dialect) as explained:
            changes_since(connection, marks, RESCAN_MARGIN_S, MAX_TOUCHED, last_read=T + 30 * DAY)
        scratch.drop(connection)

    message = ("tx_nrmcpagent_message",)
    scans = [
        (statement, plan)
        for statement, plan in explained
        if _full_scans(plan, dialect, message) or _whole_index(plan, dialect, message)
    ]
    # The newest uids, the conversations stamped since, the runs stamped since, the runs' newest stamp, those
    # stamped before the last read's margin let go, whether one is left, the conversations of the new
    # messages, of those runs and of the new events.
    assert len(explained) == 9
    assert not scans, "\n\n".join(f"{statement}\n{plan}" for statement, plan in scans)


def test_a_rerun_reads_the_run_table_and_the_conversation_table_whole_once_each(
    site_engine: Engine, dialect: str
) -> None:
    # Neither table has an index on tstamp: the runs and the conversations stamped since the marks are a pass
    # over each. Asked once for the new marks, once for the changed conversations and once more for the runs
    # no conversation names, the runs were read whole three times and the conversations twice.
    # Every run and conversation of the site is stamped T: one of each changed a minute before the last
    # read, and measured, is read again by the rerun an hour later (the runs no conversation names are then
    # looked for among the runs read again), the others, stamped long before it, are not.
    r, c = schema.agentrun.c, schema.conversation.c
    measure_rates(site_engine, now=T + 30 * DAY, window_s=7 * DAY)
    with site_engine.begin() as connection:
        late = T + 30 * DAY - 60
        newest = connection.execute(select(func.max(r.uid))).scalar_one()
        connection.execute(update(schema.agentrun).where(r.uid == newest).values(tstamp=late))
        newest = connection.execute(select(func.max(c.uid))).scalar_one()
        connection.execute(update(schema.conversation).where(c.uid == newest).values(tstamp=late))
    measure_rates(site_engine, now=T + 30 * DAY, window_s=7 * DAY)
    with _explaining(site_engine, dialect) as explained:
        summary = measure_rates(site_engine, now=T + 30 * DAY + 3600, window_s=7 * DAY)

    read_whole = {
        table: [statement for statement, plan in explained if _full_scans(plan, dialect, (table,))]
        for table in ("tx_nrllm_agentrun", "tx_nrmcpagent_conversation")
    }
    assert not summary.all_conversations and summary.conversations >= 1 and summary.unnamed_runs == 0
    unnamed = [
        statement
        for statement, _ in explained
        if statement.startswith("INSERT INTO tx_runrecord_m_fact") and "tx_runrecord_m_since_run" in statement
    ]
    assert len(unnamed) == 1
    assert all(len(statements) <= 1 for statements in read_whole.values()), {
        table: [statement[:160] for statement in statements] for table, statements in read_whole.items()
    }


def test_a_reruns_edited_runs_are_counted_with_each_runs_edited_writes_looked_up_by_its_key(
    site_engine: Engine, dialect: str
) -> None:
    derive_outcomes(site_engine, now=T + 30 * DAY, window_s=7 * DAY)
    measure_rates(site_engine, now=T + 30 * DAY, window_s=7 * DAY)
    with site_engine.begin() as connection:
        # Every run EDITED, each write with a scope: the count below then holds every run of the site.
        connection.execute(update(schema.run_outcome).values(outcome=CallOutcome.EDITED.value))
        connection.execute(
            update(schema.write_outcome).values(
                outcome=CallOutcome.EDITED.value, edit_scope=EditScope.SAME_FIELDS.value
            )
        )
        first = connection.execute(select(func.min(schema.measure_fact.c.day_start))).scalar_one()
        with _explaining(connection, dialect) as explained:
            found = tallies.edited_tallies(connection, Grain.DAY, open_from=day_of(first), periods=())

    assert sum(tally.runs for tally in found) == PAGES
    assert {tally.scope for tally in found} == {EditScope.SAME_FIELDS}
    # Every fact of the site is in the open periods here, so the facts' own plan is the planner's to choose.
    growing = ("tx_runrecord_run_outcome", "tx_runrecord_write_outcome")
    leading = _leading_columns(site_engine, growing)
    scans = [
        (statement, plan)
        for statement, plan in explained
        if _full_scans(plan, dialect, growing) or _off_key_index_reads(plan, dialect, leading)
    ]
    assert len(explained) == 1
    assert not scans, "\n\n".join(f"{statement}\n{plan}" for statement, plan in scans)


def test_the_first_stored_notice_is_read_from_the_notice_index_not_by_walking_every_fact(
    site_engine: Engine, dialect: str
) -> None:
    measure_rates(site_engine, now=T + 30 * DAY, window_s=7 * DAY)
    with site_engine.connect() as connection, _explaining(connection, dialect) as explained:
        first = first_notice_at(connection)

    assert first is None  # the site's answers carry no notice: every fact would be walked
    ((statement, plan),) = explained
    assert "tx_runrecord_measure_fact_notice" in plan, f"{statement}\n{plan}"


def test_the_days_with_facts_are_read_one_index_entry_a_day_not_from_every_fact(
    site_engine: Engine, dialect: str
) -> None:
    # MariaDB reads the day index by a loose scan (migration 0016): without it, the distinct days were a pass
    # over every fact.
    if dialect != "mariadb":
        pytest.skip("PostgreSQL and SQLite seek each day's first fact through the ended_at index")
    measure_rates(site_engine, now=T + 30 * DAY, window_s=7 * DAY)
    with site_engine.connect() as connection, _explaining(connection, dialect) as explained:
        days = tallies.fact_days_before(connection, unix_of(period_start(T, Grain.DAY)) + 2 * DAY)

    assert days == {period_start(T, Grain.DAY)}
    ((statement, plan),) = explained
    assert "key=tx_runrecord_measure_fact_day" in plan, f"{statement}\n{plan}"
    assert "index for group-by" in plan, f"{statement}\n{plan}"


def _leading_columns(engine: Engine, tables: tuple[str, ...]) -> dict[str, str]:
    """The first column of each index of the tables (their primary keys and unique keys too), by its name."""
    inspector = inspect(engine)
    leading = {}
    for table in tables:
        key = inspector.get_pk_constraint(table)
        keys = [key] if key.get("name") else []
        for index in [*keys, *inspector.get_indexes(table), *inspector.get_unique_constraints(table)]:
            columns = index.get("constrained_columns") or index.get("column_names") or []
            if index["name"] and columns and columns[0]:
                leading[index["name"]] = columns[0]
    return leading


def _off_key_index_reads(plan: str, dialect: str, leading: dict[str, str]) -> list[str]:
    """PostgreSQL: the indexes of the growing tables read with a condition that leaves out their first column,
    which reads the whole index. The retired runs of a batch were read as the stored facts with
    message_uid = 0, the second column of (run_uid, message_uid): every stored fact for every batch."""
    if dialect != "postgresql":
        return []
    node = re.compile(r"(?:Bitmap Index Scan on (\w+)|Index (?:Only )?Scan (?:Backward )?using (\w+) on)")
    lines = plan.splitlines()
    found = []
    for at, line in enumerate(lines):
        scan = node.search(line)
        index = scan and (scan.group(1) or scan.group(2))
        if not index or index not in leading:
            continue
        for condition in _node_details(lines, at):
            if condition.startswith("Index Cond:") and not re.search(rf"\b{leading[index]}\b", condition):
                found.append(index)
    return found


def _whole_index(plan: str, dialect: str, tables: tuple[str, ...] = MEASURE_NEVER_SCANNED) -> list[str]:
    """MariaDB: the growing tables whose index a statement reads whole (type=index). A batch's events
    counted as `run IN (…)` read all of nr-llm's (run, sequence) index for a later batch (349,692 entries at
    the wide shape's 0.05, measured)."""
    if dialect != "mariadb":
        return []
    pattern = r"^({}) key=\S+ type=index".format("|".join(tables))
    return re.findall(pattern, plan, re.M)


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
