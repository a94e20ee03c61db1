"""Benchmark of `derive-outcomes` against the floor (a full scan of sys_history) and a per-write query loop.

    python -m benchmarks.bench_derive --engine sqlite --scale 0.01
    python -m benchmarks.bench_derive --engine postgresql --scale 0.1

Builds an installation of `scale` x (1,000,000 writes, 10,000,000 sys_history rows) into a new database,
then measures, each in a fresh process on the same engine (peak memory is that process's own):

* floor: SELECT count(*), sum(tstamp) FROM sys_history — an aggregate over every row (best of two);
* loop: a straightforward per-write loop on a sample of writes — per write one history query, one query for
  the record's AI writes, one presence query, the classification and one insert (rolled back) — with the
  write targets table built for it for free; extrapolated to every write;
* derive: the job itself, from nothing derived to everything derived.

Goals: derive within 3x the floor, at least 20x faster than the loop, peak memory under 500 MB at any scale.

The rows have the builder's shapes (jobs/installation/builder.py: events, history_data, records) but are
written by a bulk path here (executemany of plain tuples; COPY on PostgreSQL): the builder writes ~60,000
rows/s, too slow for 18,000,000 rows. Conversations and messages are left out: the derivation never reads
them. Of the history rows, those of the written records are their add row, the AI's own rows and the
editors' changes; the rest is editor activity on records the AI never wrote, as on a real installation.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import resource
import secrets
import sys
import tempfile
import time
import uuid as uuidlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, func, select, text
from sqlalchemy.engine import URL, make_url

from core import schema
from core.outcomes import Presence, Write, classify_write
from jobs import outcome_queries as q
from jobs.database import make_engine
from jobs.derive import derive_outcomes
from jobs.dialect import insert_or_ignore
from jobs.schema_setup import init_db

DAY = 86_400
WINDOW = 7 * DAY
NOW = int(datetime(2026, 11, 29, tzinfo=UTC).timestamp())
FULL_WRITES = 1_000_000
FULL_HISTORY = 10_000_000
CHUNK = 50_000  # rows per executemany/COPY chunk: memory stays flat whatever the scale
SERVERS = {
    "postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
    "mariadb": "mysql+pymysql://root@127.0.0.1:3306/mysql",
}
OTHER_TABLES = ("tt_content", "pages", "sys_file_metadata", "sys_category", "tx_news_domain_model_news")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- the installation -----------------------------------------------------------------------------------


@dataclass
class Plan:
    writes: int
    history: int
    seed: int = 1


def _rows(plan: Plan) -> Iterator[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]]:
    """Chunks of (table, columns, rows): runs, events, pages and sys_history, in the builder's shapes."""
    rng = random.Random(plan.seed)
    run_cols = (
        "uid",
        "uuid",
        "status",
        "configuration_identifier",
        "iterations",
        "termination_reason",
        "started_at",
        "finished_at",
        "tstamp",
        "crdate",
    )
    event_cols = ("uid", "run", "sequence", "kind", "round", "duration_ms", "payload", "crdate")
    page_cols = ("uid", "pid", "tstamp", "crdate", "deleted", "hidden", "title", "description")
    history_cols = (
        "uid",
        "tstamp",
        "actiontype",
        "usertype",
        "userid",
        "recuid",
        "tablename",
        "history_data",
    )
    runs: list[tuple[Any, ...]] = []
    events: list[tuple[Any, ...]] = []
    pages: list[tuple[Any, ...]] = []
    history: list[tuple[Any, ...]] = []
    event_uid = history_uid = run_uid = page_uid = 0
    written = 0
    span = 118 * DAY
    first = NOW - 120 * DAY

    def history_row(at: int, action: int, recuid: int, table: str, data: str | None) -> None:
        nonlocal history_uid
        history_uid += 1
        history.append((history_uid, at, action, "BE", 90_001, recuid, table, data))

    def event(
        run: int, seq: int, kind: str, round_: int, ms: float, payload: dict[str, Any], at: int
    ) -> None:
        nonlocal event_uid
        event_uid += 1
        body = {"kind": kind, "round": round_, "durationMs": ms, **payload}
        events.append((event_uid, run, seq, kind, round_, ms, _json(body), at))

    def llm(run: int, seq: int, round_: int, tools: list[str], at: int) -> int:
        event(run, seq, "context", round_, 0.0, {"contextBudget": 128000}, at)
        event(run, seq + 1, "request", round_, 0.0, {"toolSpecs": 24}, at)
        finish = "tool_calls" if tools else "stop"
        tokens = {"promptTokens": 2100, "completionTokens": 180, "totalTokens": 2280}
        payload = {"finishReason": finish, **tokens, "requestedToolNames": tools, "contentLength": 0}
        event(run, seq + 2, "llm", round_, 1800.0, payload, at)
        return seq + 3

    def flush(force: bool = False) -> Iterator[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]]:
        for name, cols, rows in (
            ("tx_nrllm_agentrun", run_cols, runs),
            ("tx_nrllm_agentrun_event", event_cols, events),
            ("pages", page_cols, pages),
            ("sys_history", history_cols, history),
        ):
            if rows and (force or len(rows) >= CHUNK):
                yield name, cols, rows[:]
                rows.clear()

    recent_pages: list[int] = []
    while written < plan.writes:
        run_uid += 1
        count = min(1 + run_uid % 3, plan.writes - written)
        start = first + int(span * written / plan.writes)
        seq = llm(run_uid, 0, 1, ["update_record"], start)
        at = start
        for n in range(count):
            at = start + 60 * n + 30
            if recent_pages and rng.random() < 0.3:
                page, created = rng.choice(recent_pages), 0  # written again, by a later run
            else:
                page_uid += 1
                page, created = page_uid, start - 30 * DAY
                values = {
                    "pid": 1,
                    "title": f"Seite {page}",
                    "tstamp": created,
                    "crdate": created,
                    "description": "",
                    "hidden": 0,
                }
                history_row(created, 1, page, "pages", _json(values))
                fate = rng.random()
                deleted = 0
                if fate < 0.25:
                    field = rng.choice(("title", "description"))
                    change = {"oldRecord": {field: ""}, "newRecord": {field: "von Hand"}}
                    history_row(at + rng.randint(600, 5 * DAY), 2, page, "pages", _json(change))
                elif fate < 0.30:
                    history_row(at + rng.randint(600, 5 * DAY), 4, page, "pages", None)
                    deleted = 1
                elif fate < 0.40:
                    change = {"oldRecord": {"title": ""}, "newRecord": {"title": "später"}}
                    history_row(at + WINDOW + rng.randint(DAY, 10 * DAY), 2, page, "pages", _json(change))
                pages.append((page, 1, created, created, deleted, 0, f"Seite {page}", ""))
                recent_pages.append(page)
                if len(recent_pages) > 200:
                    recent_pages.pop(0)
            event(run_uid, seq, "approval", 0, 0.0, {"approved": True, "decidedBy": 90_001}, at)
            tool = {
                "toolName": "update_record",
                "toolIsError": False,
                "toolArgumentsLength": 12,
                "toolResultLength": 11,
            }
            event(run_uid, seq + 1, "tool", 1, 85.0, tool, at)
            target = {
                "toolName": "update_record",
                "writeTargetTable": "pages",
                "writeTargetUid": page,
                "writeCompleteness": "complete",
            }
            event(run_uid, seq + 2, "tool_write", 1, 0.0, target, at)
            seq += 3
            change = {"oldRecord": {"title": ""}, "newRecord": {"title": "neu: title"}}
            history_row(at, 2, page, "pages", _json(change))
            written += 1
        seq = llm(run_uid, seq, 2, [], at + 3)
        uuid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
        runs.append(
            (run_uid, uuid, "completed", "content-assistant", 2, "completed", start, at + 5, at + 5, start)
        )
        yield from flush()
    # Editors' activity on records the AI never wrote: the rest of sys_history.
    while history_uid < plan.history:
        table = rng.choice(OTHER_TABLES)
        field = rng.choice(("header", "bodytext", "title"))
        change = {"oldRecord": {field: "alt"}, "newRecord": {field: "neu"}}
        history_row(
            first - 30 * DAY + rng.randint(0, 150 * DAY),
            2,
            10_000_000 + rng.randint(0, 10**6),
            table,
            _json(change),
        )
        if len(history) >= CHUNK:
            yield from flush()
    yield from flush(force=True)


def build(url: URL, plan: Plan) -> dict[str, int]:
    """Write the installation: our tables and the upstream ones by init_db, the rows by the bulk path."""
    engine = make_engine(url)
    init_db(engine, with_upstream=True)
    counts: dict[str, int] = {}
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        if url.get_backend_name() == "sqlite":
            cursor.execute("PRAGMA synchronous = OFF")
        for name, columns, rows in _rows(plan):
            counts[name] = counts.get(name, 0) + len(rows)
            _write(url.get_backend_name(), cursor, name, columns, rows)
        if url.get_backend_name() == "postgresql":
            for name in counts:
                cursor.execute(
                    f"SELECT setval(pg_get_serial_sequence('{name}', 'uid'), (SELECT max(uid) FROM {name}))"
                )
        raw.commit()
    finally:
        raw.close()
        engine.dispose()
    return counts


def _write(
    backend: str, cursor: Any, name: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> None:
    names = ", ".join(columns)
    if backend == "postgresql":
        with cursor.copy(f"COPY {name} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        return
    marks = ", ".join(["?" if backend == "sqlite" else "%s"] * len(columns))
    cursor.executemany(f"INSERT INTO {name} ({names}) VALUES ({marks})", rows)


# --- the measurements, each in a process of its own --------------------------------------------------------


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _floor(url: str) -> dict[str, float]:
    engine = make_engine(url)
    best = float("inf")
    with engine.connect() as connection:
        for _ in range(2):
            started = time.perf_counter()
            connection.execute(select(func.count(), func.sum(schema.sys_history.c.tstamp))).one()
            best = min(best, time.perf_counter() - started)
    engine.dispose()
    return {"seconds": best, "peak_mb": _peak_mb()}


def _loop(url: str, sample: int) -> dict[str, float]:
    """The per-write loop on `sample` due writes: the time per write, extrapolated by the caller."""
    engine = make_engine(url)
    with engine.connect() as connection:
        with connection.begin():
            q.create_write_targets(connection)
            oldest = q.oldest_retained_tstamp(connection)
            catalog = q.TableCatalog(connection)
        transaction = connection.begin()
        targets = q.write_target
        writes = connection.execute(
            select(targets)
            .where(targets.c.written_at < NOW - WINDOW)
            .order_by(targets.c.event_uid)
            .limit(sample)
        ).all()
        dialect = connection.dialect.name
        page_table = catalog.get("pages")
        assert page_table is not None
        started = time.perf_counter()
        for write in writes:
            records = {write.tablename: {write.recuid}}
            rows = q.history_rows(
                connection, records, keys_from=write.written_at - 2, keys_to=write.written_at + WINDOW
            )
            times = q.ai_write_times(connection, records)
            state = q.presence(connection, page_table, [write.recuid])
            key = (write.tablename, write.recuid)
            outcome = classify_write(
                Write(write.event_uid, write.tablename, write.recuid, write.written_at),
                rows.get(key, ()),
                times.get(key, ()),
                state.get(write.recuid, Presence.ROW_MISSING),
                oldest,
                WINDOW,
            )
            connection.execute(
                insert_or_ignore(dialect, schema.write_outcome),
                {"run_uid": write.run_uid, "event_uid": write.event_uid, "outcome": outcome.outcome.value},
            )
        seconds = time.perf_counter() - started
        transaction.rollback()
        with connection.begin():
            q.drop_write_targets(connection)
    engine.dispose()
    return {"seconds_per_write": seconds / max(len(writes), 1), "sample": len(writes), "peak_mb": _peak_mb()}


def _derive(url: str) -> dict[str, float]:
    engine = make_engine(url)
    summary = derive_outcomes(engine, now=NOW, window_s=WINDOW)
    engine.dispose()
    return {
        "seconds": summary.seconds,
        "runs": summary.runs_derived,
        "writes": summary.writes_derived,
        "peak_mb": _peak_mb(),
        "summary": summary.to_json(),
    }  # type: ignore[dict-item]


def _in_process(function: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        return pool.apply(function, args)


# --- main -------------------------------------------------------------------------------------------------


def _database(engine_name: str, directory: Path) -> tuple[URL, Callable[[], None]]:
    if engine_name == "sqlite":
        path = directory / "bench.sqlite"
        return URL.create("sqlite", database=str(path)), lambda: path.unlink(missing_ok=True)
    server = make_url(SERVERS[engine_name])
    name = f"runrecord_bench_{secrets.token_hex(4)}"
    admin: Engine = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))

    def drop() -> None:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        admin.dispose()

    return server.set(database=name), drop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="1.0 = 1,000,000 writes, 10,000,000 history rows"
    )
    parser.add_argument("--sample", type=int, default=1_000, help="writes the per-write loop measures")
    args = parser.parse_args(argv)
    plan = Plan(
        writes=max(int(FULL_WRITES * args.scale), 10), history=max(int(FULL_HISTORY * args.scale), 100)
    )
    with tempfile.TemporaryDirectory(prefix="runrecord-bench-") as directory:
        url, drop = _database(args.engine, Path(directory))
        try:
            started = time.perf_counter()
            counts = build(url, plan)
            built = time.perf_counter() - started
            print(
                f"built {sum(counts.values()):,} rows in {built:.0f} s: "
                + ", ".join(f"{name} {n:,}" for name, n in counts.items()),
                flush=True,
            )
            target = url.render_as_string(hide_password=False)
            floor = _in_process(_floor, target)
            loop = _in_process(_loop, target, args.sample)
            derived = _in_process(_derive, target)
        finally:
            drop()
    loop_total = loop["seconds_per_write"] * derived["writes"]
    report = {
        "engine": args.engine,
        "scale": args.scale,
        "history_rows": counts.get("sys_history", 0),
        "writes_derived": derived["writes"],
        "runs_derived": derived["runs"],
        "floor_s": round(floor["seconds"], 3),
        "derive_s": round(derived["seconds"], 3),
        "derive_vs_floor": round(derived["seconds"] / floor["seconds"], 2),
        "loop_s_per_write": round(loop["seconds_per_write"], 6),
        "loop_sample": loop["sample"],
        "loop_extrapolated_s": round(loop_total, 1),
        "loop_vs_derive": round(loop_total / derived["seconds"], 1),
        "derive_peak_mb": round(derived["peak_mb"], 1),
        "floor_peak_mb": round(floor["peak_mb"], 1),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
