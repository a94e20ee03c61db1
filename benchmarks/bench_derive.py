"""Benchmark of `derive-outcomes` against the floor, the minimum and a per-write loop, on one engine.

    python -m benchmarks.bench_derive --engine sqlite --scale 0.01
    python -m benchmarks.bench_derive --engine postgresql --scale 0.2 --shape fanout

Builds an installation of `scale` x (1,000,000 writes, 10,000,000 sys_history rows) of one shape into a new
database, then measures, each in a fresh process on the same engine (peak memory is that process's VmHWM):

* floor: the engine's own full read of the inputs — every sys_history row (its tstamp and the length of its
  history_data) and every tool_write event (the length of its payload) once, in two aggregates (best of two);
* the per-write loop: a straightforward loop on the first due runs — per write one history query of its
  record (keys read in SQL), one query for the record's AI writes, one presence query, the classification
  and one insert; per run its run row, the look-up of an observed row and the mirrored row (rolled back) —
  extrapolated to every write, plus its set-up (every tool_write payload parsed, the list of due writes),
  timed and charged once;
* full: the job itself, from nothing derived to everything derived; the parts it times itself
  (`Summary.phases`, when the job has them) are printed beside it;
* the minimum: the floor plus the engine writing the full run's output rows again — every
  tx_runrecord_write_outcome, tx_runrecord_run_outcome and observed tx_nrllm_call_outcome row, by
  `INSERT … SELECT` from the stored rows into empty copies with the same keys and indexes, one transaction;
* a night: about 1% more writes, newly due (runs, events and history rows with higher uids, written just
  before the window's end), and the job run again, as the command runs it (a fresh process);
* a night in the scheduler's process: another 1% so, and the job run in the process that ran the full run,
  on the same engine (adapters.database.job_engine), as the scheduler runs each night in one long-lived
  process (its statements compiled already: SQLAlchemy keeps them per engine).

Goals, each judged in the same run: full within 3x the minimum; at least 10x faster than the per-write loop
on PostgreSQL and MariaDB, 3x on SQLite; a night under 5% of the full run; every job process under 200 MB.

With `--against CHECKOUT` (another clone or `git worktree` of runrecord, its .venv installed with `make
.venv/.installed`) the benchmark builds the installation and only times this checkout's job and the other's
on it, back to back, `--rounds` times each, each from the installation as it was built (benchmarks.versus):

    python -m benchmarks.bench_derive --engine sqlite --scale 0.2 --against ../runrecord-3762606

The installation is benchmarks.installation's: sys_history numbered in insertion order and stamped as TYPO3
stamps it (exec and worker strategies, the chatting editor's hand edits, `_cli_` tasks), in the shape asked
for (`--shape`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from contextlib import nullcontext
from itertools import groupby
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    and_,
    bindparam,
    case,
    column,
    func,
    insert,
    select,
)
from sqlalchemy import table as table_clause
from sqlalchemy.engine import URL

from adapters import schema
from adapters.database import job_engine, make_engine
from adapters.dialect import bulk, plans
from adapters.dialect import json as sqljson
from adapters.history import automation_row, backend_userid
from benchmarks import versus
from benchmarks.harness import in_process, kept_process, peak_mb, scratch_database
from benchmarks.installation import (
    CHUNK,
    COLUMNS,
    DAY,
    NOW,
    SHAPES,
    TEXT_FIELD,
    WINDOW,
    Plan,
    Shape,
    build,
    full_plan,
    json_text,
)
from benchmarks.statements import add_statements_option, refuse_beside_against, timed
from benchmarks.statements import report_lines as statement_lines
from core.classification import classify_write
from core.outcomes import (
    RULE_VERSION,
    CallOutcome,
    HistoryRow,
    Presence,
    Write,
    WriteOutcome,
    run_outcome,
    unreadable_target,
)
from core.table_names import is_table_name
from jobs.derive import derive_outcomes

NIGHT_SHARE = 0.01  # a night's newly due writes, against the installation's


def night_plan(url: str, full: Plan, night: int = 1) -> Plan:
    """About 1% more writes, newly due at NOW: after every uid there is, written just before the cutoff (the
    `night`-th such night drawn from a seed of its own)."""
    engine = make_engine(url)
    with engine.connect() as connection:
        after = {
            name: int(
                connection.execute(select(func.max(column("uid"))).select_from(table_clause(name))).scalar()
                or 0
            )
            for name in COLUMNS
        }
    engine.dispose()
    return Plan(
        writes=max(int(full.writes * NIGHT_SHARE), 1),
        history=0,
        shape=full.shape,
        first=NOW - WINDOW - DAY,
        span=DAY - 2 * 3600,  # the last write of the last run still a while before the cutoff
        seed=full.seed + night,
        after=after,
    )


# --- the floor and the minimum -----------------------------------------------------------------------------


def _floor(url: str) -> dict[str, float]:
    """Every sys_history row and every tool_write event read once, inside the engine."""
    h, e = schema.sys_history, schema.agentrun_event
    history = select(func.count(), func.sum(h.c.tstamp), func.sum(func.length(h.c.history_data)))
    events = select(func.count(), func.sum(func.length(e.c.payload))).where(e.c.kind == "tool_write")
    engine = make_engine(url)
    best = float("inf")
    with engine.connect() as connection:
        for _ in range(2):
            started = time.perf_counter()
            connection.execute(history).one()
            connection.execute(events).one()
            best = min(best, time.perf_counter() - started)
    engine.dispose()
    return {"seconds": best, "peak_mb": peak_mb()}


OUTPUT_TABLES = (schema.write_outcome, schema.run_outcome, schema.call_outcome)


def _copy_of(table: Table, metadata: MetaData) -> Table:
    """An empty table like `table`: its columns, keys and indexes, under names of its own."""
    name = f"bench_copy_{table.name}"[:60]
    copy = Table(
        name,
        metadata,
        *(Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable) for c in table.columns),
    )
    for number, index in enumerate(sorted(table.indexes, key=lambda i: str(i.name))):
        Index(f"{name}_i{number}", *(copy.c[c.name] for c in index.columns), unique=bool(index.unique))
    uniques = [c for c in table.constraints if isinstance(c, UniqueConstraint)]
    for number, unique in enumerate(uniques):
        copy.append_constraint(UniqueConstraint(*(c.name for c in unique.columns), name=f"{name}_u{number}"))
    return copy


def _writing(url: str) -> dict[str, Any]:
    """The engine writing the job's stored output rows again, INSERT … SELECT into empty copies; one
    transaction, committed. The copies are made before and dropped after, untimed."""
    engine = make_engine(url)
    metadata = MetaData()
    copies = [(table, _copy_of(table, metadata)) for table in OUTPUT_TABLES]
    with engine.connect() as connection:
        with connection.begin():
            metadata.create_all(connection)
        started = time.perf_counter()
        with connection.begin():
            for table, copy in copies:
                names = [c.name for c in table.columns if c.name != "uid"]
                connection.execute(copy.insert().from_select(names, select(*(table.c[n] for n in names))))
        seconds = time.perf_counter() - started
        with connection.begin():
            # Counted afterwards: a driver's rowcount of INSERT … SELECT is not always the rows inserted.
            rows = sum(
                connection.execute(select(func.count()).select_from(copy)).scalar_one() for _, copy in copies
            )
            metadata.drop_all(connection)
    engine.dispose()
    return {"seconds": seconds, "rows": rows, "peak_mb": peak_mb()}


# --- the per-write loop -----------------------------------------------------------------------------------

TARGETS = Table(
    "bench_write_target",
    MetaData(),
    Column("event_uid", Integer, primary_key=True),
    Column("run_uid", Integer, nullable=False),
    Column("written_at", Integer, nullable=False),
    Column("tablename", String(64), nullable=True),
    Column("recuid", Integer, nullable=True),
    Index("bench_write_target_record", "tablename", "recuid"),
    Index("bench_write_target_run", "run_uid", "written_at"),
    prefixes=["TEMPORARY"],
)


def _target(row: Any) -> tuple[int, int, int, str | None, int | None]:
    """A tool_write event's target, read in Python: (event, run, at, table, uid); table and uid None when
    the payload does not name them the way DOMAIN.md says."""
    try:
        payload = json.loads(row.payload or "")
    except ValueError:
        payload = {}
    table = payload.get("writeTargetTable") if isinstance(payload, dict) else None
    uid = payload.get("writeTargetUid") if isinstance(payload, dict) else None
    readable = isinstance(table, str) and is_table_name(table) and isinstance(uid, int) and uid > 0
    return row.uid, row.run, row.crdate, table if readable else None, uid if readable else None


def _loop_setup(connection: Connection) -> tuple[int | None, list[tuple[Any, ...]]]:
    """What the loop needs before its first write: every target (parsed, in a temporary table with an index),
    the oldest retained history row, and every due write."""
    e = schema.agentrun_event
    events = select(e.c.uid, e.c.run, e.c.crdate, e.c.payload).where(e.c.kind == "tool_write")
    TARGETS.create(connection)
    keys = ("event_uid", "run_uid", "written_at", "tablename", "recuid")
    batch: list[dict[str, Any]] = []
    for row in connection.execute(events):
        batch.append(dict(zip(keys, _target(row), strict=True)))
        if len(batch) >= CHUNK:
            connection.execute(insert(TARGETS), batch)
            batch.clear()
    if batch:
        connection.execute(insert(TARGETS), batch)
    oldest = connection.execute(select(func.min(schema.sys_history.c.tstamp))).scalar()
    return oldest, _due_writes(connection)


def _loop(url: str, sample: int) -> dict[str, float]:
    """A straightforward per-write loop on the first due runs (about `sample` writes), rolled back.

    Each statement is built once with bound parameters, so SQLAlchemy compiles it once and every write only
    executes it: not made slow. Nor given anything for free: its set-up is timed and charged once.
    """
    engine = make_engine(url)
    with engine.connect() as connection:
        started = time.perf_counter()
        with connection.begin():
            oldest, writes = _loop_setup(connection)
        setup_s = time.perf_counter() - started
        statements = _loop_statements(connection.dialect.name)
        runs = [list(run_writes) for _, run_writes in groupby(writes, key=lambda w: w[1])]
        transaction = connection.begin()
        done = 0
        started = time.perf_counter()
        for run_writes in runs:
            if done >= sample:
                break
            outcomes = []
            for event_uid, run_uid, written_at, tablename, recuid, uuid, _ in run_writes:
                write = (event_uid, written_at, tablename, recuid)
                outcome = _loop_write(connection, statements, oldest, write)
                outcomes.append(outcome.outcome)
                connection.execute(statements["write"], _loop_write_row(run_uid, uuid, write, outcome))
                done += 1
            _loop_run(connection, statements, run_writes, run_outcome(outcomes))
        seconds = time.perf_counter() - started
        transaction.rollback()
    engine.dispose()
    return {
        "setup_s": setup_s,
        "seconds_per_write": seconds / max(done, 1),
        "sample": done,
        "peak_mb": peak_mb(),
    }


def _due_writes(connection: Connection) -> list[tuple[Any, ...]]:
    """Every write of every due run: (event, run, at, table, uid, run uuid, configuration), in run order."""
    w, run = TARGETS, schema.agentrun
    due = (
        select(w.c.run_uid)
        .group_by(w.c.run_uid)
        .having(func.max(w.c.written_at) < NOW - WINDOW)
        .subquery("due")
    )
    query = (
        select(w.c.event_uid, w.c.run_uid, w.c.written_at, w.c.tablename, w.c.recuid, run.c.uuid)
        .add_columns(run.c.configuration_identifier)
        .join(due, due.c.run_uid == w.c.run_uid)
        .join(run, run.c.uid == w.c.run_uid)
        .order_by(w.c.run_uid, w.c.event_uid)
    )
    return [tuple(row) for row in connection.execute(query)]


def _loop_statements(dialect: str) -> dict[str, Any]:
    h, w = schema.sys_history, TARGETS
    history = plans.fenced(
        dialect,
        select(
            h.c.uid,
            h.c.tstamp,
            h.c.actiontype,
            sqljson.json_document(dialect, h.c.history_data).label("document"),
        ).where(h.c.tablename == bindparam("table"), h.c.recuid == bindparam("uid")),
    ).subquery("history")
    observed = schema.call_outcome
    run, other, lane_run = schema.agentrun, TARGETS.alias("other"), schema.agentrun.alias("lane_run")
    same_record = and_(other.c.tablename == bindparam("table"), other.c.recuid == bindparam("uid"))
    # Who wrote a row is compared in SQL (DESIGN.md rule 3): the row's lane, never its user.
    row_lane = (
        select(func.min(other.c.event_uid))
        .select_from(other.join(lane_run, lane_run.c.uid == other.c.run_uid))
        .where(same_record, lane_run.c.be_user == backend_userid(h))
        .scalar_subquery()
    )
    write_lane = (
        select(func.min(other.c.event_uid))
        .select_from(other.join(lane_run, lane_run.c.uid == other.c.run_uid))
        .where(same_record, lane_run.c.be_user == run.c.be_user)
        .scalar_subquery()
    )
    history = plans.fenced(
        dialect,
        select(
            h.c.uid,
            h.c.tstamp,
            h.c.actiontype,
            sqljson.json_document(dialect, h.c.history_data).label("document"),
            case((func.coalesce(h.c.workspace, 0) == 0, 1), else_=0).label("live"),
            automation_row(h).label("automation"),
            row_lane.label("lane"),
        ).where(h.c.tablename == bindparam("table"), h.c.recuid == bindparam("uid")),
    ).subquery("history")
    return {
        # Every row's keys: one record has a handful of rows, not worth a condition on tstamp.
        "history": select(
            history.c.uid,
            history.c.tstamp,
            history.c.actiontype,
            sqljson.record_keys(dialect, history.c.document, history.c.actiontype),
            history.c.live,
            history.c.automation,
            history.c.lane,
        ),
        "ai": select(w.c.event_uid, w.c.written_at, run.c.uuid, write_lane)
        .select_from(w.join(run, run.c.uid == w.c.run_uid))
        .where(w.c.tablename == bindparam("table"), w.c.recuid == bindparam("uid")),
        **{
            f"presence {name}": select(record.c.deleted).where(record.c.uid == bindparam("uid"))
            for name in TEXT_FIELD
            for record in [table_clause(name, column("uid"), column("deleted"))]
        },
        "write": bulk.insert_or_ignore(dialect, schema.write_outcome),
        "run": bulk.insert_or_ignore(dialect, schema.run_outcome),
        "observed": select(observed.c.uid).where(
            observed.c.correlation_id == bindparam("uuid"),
            observed.c.outcome.in_([o.value for o in CallOutcome]),
        ),
        "mirror": insert(schema.call_outcome),
    }


def _loop_write(
    connection: Connection,
    statements: dict[str, Any],
    oldest: int | None,
    write: tuple[int, int, str | None, int | None],
) -> WriteOutcome:
    event_uid, written_at, tablename, recuid = write
    if tablename is None or recuid is None:
        return unreadable_target(event_uid)
    record = {"table": tablename, "uid": recuid}
    history = [
        HistoryRow(uid, tstamp, actiontype, sqljson.fields_of(keys), bool(live), bool(automation), lane)
        for uid, tstamp, actiontype, keys, live, automation, lane in connection.execute(
            statements["history"], record
        )
    ]
    writes = [
        Write(uid, tablename, recuid, at, uuid, lane)
        for uid, at, uuid, lane in connection.execute(statements["ai"], record)
    ]
    assert tablename in TEXT_FIELD, "the benchmark writes pages and tt_content only"
    found = connection.execute(statements[f"presence {tablename}"], {"uid": recuid}).first()
    presence = Presence.ROW_MISSING if found is None else Presence.DELETED if found[0] else Presence.PRESENT
    own = next(w for w in writes if w.event_uid == event_uid)
    return classify_write(own, history, writes, presence, oldest, WINDOW)


def _loop_write_row(
    run_uid: int, uuid: str, write: tuple[int, int, str | None, int | None], outcome: WriteOutcome
) -> dict[str, Any]:
    event_uid, written_at, tablename, recuid = write
    return {
        "run_uid": run_uid,
        "correlation_id": uuid,
        "event_uid": event_uid,
        "tablename": tablename or "",
        "recuid": recuid or 0,
        "written_at": written_at,
        "outcome": outcome.outcome.value,
        "reason": outcome.reason.value if outcome.reason else "",
        "edit_scope": outcome.edit_scope.value if outcome.edit_scope else "",
        "first_change_after_s": outcome.first_change_after_s,
        "rule_version": outcome.rule_version,
        "derived_at": NOW,
        "decided_by": json_text(sorted(outcome.decided_by)),
    }


def _loop_run(
    connection: Connection,
    statements: dict[str, Any],
    run_writes: list[tuple[Any, ...]],
    outcome: CallOutcome,
) -> None:
    _, run_uid, _, _, _, uuid, configuration = run_writes[-1]
    row = {
        "run_uid": run_uid,
        "correlation_id": uuid,
        "outcome": outcome.value,
        "writes": len(run_writes),
        "configuration_identifier": configuration or "",
        "window_s": WINDOW,
        "rule_version": RULE_VERSION,
        "derived_at": NOW,
        "last_write_at": max(write[2] for write in run_writes),
    }
    connection.execute(statements["run"], row)
    if connection.execute(statements["observed"], {"uuid": uuid}).first() is None:
        mirrored = {"pid": 0, "correlation_id": uuid, "outcome": outcome.value, "crdate": NOW, "tstamp": NOW}
        connection.execute(statements["mirror"], mirrored)


# --- the job ------------------------------------------------------------------------------------------------


def _derive(url: str, statements: int = 0) -> dict[str, Any]:
    """The job on the engine the scheduler's jobs run on: new in a fresh process, as the command's; in a
    process kept from an earlier run (harness.kept_process), that run's, its statements compiled. With
    `statements`, each statement timed and that many of the costliest kept (benchmarks.statements)."""
    with job_engine(url) as engine, timed(engine) if statements else nullcontext() as times:
        summary = derive_outcomes(engine, now=NOW, window_s=WINDOW)
    phases: dict[str, float] = dict(getattr(summary, "phases", None) or {})
    figures = {
        "seconds": summary.seconds,
        "runs": summary.runs_derived,
        "writes": summary.writes_derived,
        "phases": phases,
        "peak_mb": peak_mb(),
    }
    return figures if times is None else figures | {"statements": times.report(statements)}


# --- main ---------------------------------------------------------------------------------------------------


def measure(engine_name: str, scale: float, shape: Shape, sample: int, statements: int = 0) -> dict[str, Any]:
    """Build the installation, run every measurement on it, and return the figures (with `statements`, the
    full run's costliest statements too)."""
    plan = full_plan(scale, shape)
    with tempfile.TemporaryDirectory(prefix="runrecord-bench-") as directory:
        url, drop = scratch_database(engine_name, Path(directory))
        try:
            started = time.perf_counter()
            counts = build(url, plan)
            built = time.perf_counter() - started
            print(f"built {sum(counts.values()):,} rows in {built:.0f} s: {_listed(counts)}", flush=True)
            target = url.render_as_string(hide_password=False)
            with kept_process() as scheduler:
                figures = {
                    "floor": in_process(_floor, target),
                    "loop": in_process(_loop, target, sample),
                    "full": scheduler(_derive, target, statements),
                }
                figures["writing"] = in_process(_writing, target)
                night = build(url, night_plan(target, plan), create=False)
                figures["night"] = in_process(_derive, target)
                figures["night"]["built"] = night
                night = build(url, night_plan(target, plan, 2), create=False)
                # Its peak memory is its process's: the full run's included.
                figures["scheduler_night"] = scheduler(_derive, target) | {"built": night}
        finally:
            drop()
    return {"engine": engine_name, "scale": scale, "shape": shape.name, "counts": counts, **figures}


def _against(engine_name: str, scale: float, shape: Shape, directory: Path, rounds: int) -> int:
    """Build the installation and time the two checkouts' jobs on it back to back (benchmarks.versus)."""

    def built(url: URL) -> None:
        counts = build(url, full_plan(scale, shape))
        print(f"built {sum(counts.values()):,} rows: {_listed(counts)}", flush=True)

    title = f"derive-outcomes on {engine_name}, scale {scale:g}, shape {shape.name}"
    return versus.compare("bench_derive", engine_name, directory, rounds, built, title)


def _listed(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n:,}" for name, n in counts.items())


GOAL_MINIMUM = 3.0  # full run within this many times the minimum
GOAL_LOOP = {"sqlite": 3.0, "postgresql": 10.0, "mariadb": 10.0}  # at least this many times faster
GOAL_NIGHT = 0.05  # a night under this share of the full run
GOAL_PEAK_MB = 200.0


def report_lines(figures: dict[str, Any]) -> list[str]:
    """The table, the goals and what the figures say."""
    shape = SHAPES[figures["shape"]]
    floor_s = figures["floor"]["seconds"]
    minimum_s = floor_s + figures["writing"]["seconds"]
    full, night, loop = figures["full"], figures["night"], figures["loop"]
    loop_s = loop["setup_s"] + loop["seconds_per_write"] * full["writes"]
    counts = figures["counts"]

    def row(what: str, seconds: float, peak: float | None = None, extra: str = "") -> str:
        ratios = f"{seconds / floor_s:9.1f}x {seconds / minimum_s:9.1f}x"
        memory = f"{peak:7.0f}" if peak is not None else " " * 7
        return f"  {what:<66} {seconds:9.3f} {ratios} {memory}  {extra}".rstrip()

    lines = [
        f"derive-outcomes on {figures['engine']}, scale {figures['scale']:g}, shape {shape.name} "
        f"({shape.what}; {'every run in a conversation' if shape.conversations else 'no conversations'})",
        f"  {counts.get('sys_history', 0):,} sys_history rows, "
        f"{full['writes']:,} writes of {full['runs']:,} runs due",
        f"  {'':<66} {'seconds':>9} {'÷ floor':>10} {'÷ minimum':>10} {'peak MB':>7}",
        row(
            "floor: every sys_history row and tool_write event read once",
            floor_s,
            figures["floor"]["peak_mb"],
        ),
        row(f"minimum: the floor + the job's {figures['writing']['rows']:,} rows written again", minimum_s),
        row(
            f"per-write loop ({loop['sample']:,} writes, extrapolated; set-up {loop['setup_s']:.2f} s)",
            loop_s,
            loop["peak_mb"],
        ),
        row("derive-outcomes, full", full["seconds"], full["peak_mb"]),
    ]
    lines += [
        row(f"  part: {name}", seconds, extra=_share(seconds, full["seconds"]))
        for name, seconds in full["phases"].items()
    ]
    night_writes = night["writes"]
    lines.append(
        row(
            f"derive-outcomes, a night by the command (+{night_writes:,} writes due)",
            night["seconds"],
            night["peak_mb"],
            f"{night['seconds'] / full['seconds']:.1%} of the full run",
        )
    )
    lines += [
        row(f"  part: {name}", seconds, extra=_share(seconds, night["seconds"]))
        for name, seconds in night["phases"].items()
    ]
    kept = figures["scheduler_night"]
    lines.append(
        row(
            f"derive-outcomes, a night, scheduler's process (+{kept['writes']:,} writes due)",
            kept["seconds"],
            kept["peak_mb"],
            f"{kept['seconds'] / full['seconds']:.1%} of the full run (peak: the process's, the full run's "
            "included)",
        )
    )
    if not full["phases"]:
        lines.append("  (the job reports no parts: jobs.derive.Summary has no phases)")
    lines += _goals(figures, minimum_s, loop_s) + _reading(figures, floor_s, minimum_s)
    if "statements" in full:
        lines += statement_lines(full["statements"], "the full run", full["seconds"])
    return lines


def _share(part: float, whole: float) -> str:
    return f"{part / whole:.0%} of the job" if whole else ""


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def _goals(figures: dict[str, Any], minimum_s: float, loop_s: float) -> list[str]:
    full, night = figures["full"], figures["night"]
    loop_goal = GOAL_LOOP[figures["engine"]]
    vs_minimum = full["seconds"] / minimum_s
    vs_loop = loop_s / full["seconds"]
    night_share = night["seconds"] / full["seconds"]
    kept_share = figures["scheduler_night"]["seconds"] / full["seconds"]
    peak = max(full["peak_mb"], night["peak_mb"])
    return [
        "goals:",
        f"  full within {GOAL_MINIMUM:g}x the minimum: {vs_minimum:.1f}x, "
        + _verdict(vs_minimum <= GOAL_MINIMUM),
        f"  at least {loop_goal:g}x faster than the per-write loop: {vs_loop:.1f}x, "
        + _verdict(vs_loop >= loop_goal),
        f"  a night under {GOAL_NIGHT:.0%} of the full run, by the command: {night_share:.1%}, "
        + _verdict(night_share < GOAL_NIGHT),
        f"  a night under {GOAL_NIGHT:.0%} of the full run, in the scheduler's process: {kept_share:.1%}, "
        + _verdict(kept_share < GOAL_NIGHT),
        f"  peak memory under {GOAL_PEAK_MB:g} MB per job process: {full['peak_mb']:.0f} MB full, "
        f"{night['peak_mb']:.0f} MB night, {_verdict(peak < GOAL_PEAK_MB)}",
    ]


def _reading(figures: dict[str, Any], floor_s: float, minimum_s: float) -> list[str]:
    """What the ratios say, from this run's figures only."""
    full, night = figures["full"], figures["night"]
    writing_s = figures["writing"]["seconds"]
    per_write = full["seconds"] / max(full["writes"], 1)
    fixed = night["seconds"] - per_write * night["writes"]
    lines = [
        "reading:",
        f"  the minimum is {minimum_s / floor_s:.1f}x the floor: writing the output rows is "
        f"{writing_s / minimum_s:.0%} of it",
        f"  the full run spends {max(full['seconds'] - minimum_s, 0):.2f} s beyond the minimum "
        f"({per_write * 1e6:.0f} µs a write in all)",
        f"  the night costs {night['seconds']:.3f} s for {night['writes']:,} writes; at the full run's "
        f"cost a write it would take {per_write * night['writes']:.3f} s, so about {max(fixed, 0):.3f} s "
        "of it is fixed (what every run pays whatever is due)",
        f"  in the scheduler's process a night took {figures['scheduler_night']['seconds']:.3f} s: a process "
        "that has run the job before has its statements compiled",
    ]
    if full["phases"]:
        name, seconds = max(full["phases"].items(), key=lambda item: item[1])
        lines.append(
            f"  the largest part of the full run: {name}, {seconds:.3f} s ({seconds / full['seconds']:.0%})"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="1.0 = 1,000,000 writes, 10,000,000 history rows"
    )
    parser.add_argument(
        "--shape", choices=tuple(SHAPES), default="default", help="the installation's traffic"
    )
    parser.add_argument("--sample", type=int, default=1_000, help="writes the per-write loop measures")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    add_statements_option(parser, "the full run")
    versus.add_options(parser, "derive-outcomes")
    args = parser.parse_args(argv)
    refuse_beside_against(parser, args)
    if args.against is not None:
        return _against(args.engine, args.scale, SHAPES[args.shape], args.against, args.rounds)
    figures = measure(args.engine, args.scale, SHAPES[args.shape], args.sample, args.statements)
    print("\n".join(report_lines(figures)))
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
