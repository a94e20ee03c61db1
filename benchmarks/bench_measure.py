"""Benchmark of `measure-rates` against a plain read of what it must bring into Python, and of a rerun.

    python -m benchmarks.bench_measure --engine sqlite --scale 0.2
    python -m benchmarks.bench_measure --engine postgresql --scale 0.2 --shape small

Builds an installation of `scale` x 1,000,000 runs with the demo generator (data/generate.py), or with
`--shape small` the same installation reshaped: every conversation cut to its first three messages and half
as many runs again that no conversation names (copies of runs, with their events); or with `--shape wide`
the derivation benchmark's wide installation (benchmarks.installation: scale x 1,000,000 writes, one short
conversation a run, two record tables, hot records, history trimmed), which this project's generator did
not shape. It derives the outcomes
(not timed), then measures, each phase in a fresh process on the same engine (peak memory is its own):

* floor: the engine's own full read of the inputs — count(*) and sum(length(...)) of the message and event
  payloads, the run records and the run uuids, inside the database;
* full: measure-rates on an installation it has never measured (every fact counted, every period written),
  with each of its phases timed inside the run (the job's own phase timer: the statements of
  adapters.measure_batch, the text rules in Python, writing the facts, the rates);
* baseline: a plain read into Python of the texts the full run brought there (the payloads of exactly the
  messages whose text a text rule judged) plus the engine's count over runs and events (count(*) per run);
* plain read: every message's payload into Python plus the same count, the read the goals were first set
  against (more texts than the baseline's, but in one pass without look-ups by uid: either may be faster);
* rerun: measure-rates again an hour later with no new data, as the scheduled job runs again (a rerun at the
  same `now` takes the clock for a fixed one, and reads again what the margin before its marks holds).

With `--against CHECKOUT --rounds N` it times this checkout's full measure-rates (both grains) against the
one at CHECKOUT instead, the two alternating on one installation, each run after its own derive-outcomes
(benchmarks.versus; CHECKOUT needs its own .venv).

Goals: full within 10x the baseline (4x the aim beyond it), judged against both reads; the rerun under 5%
of the full run; peak memory under 200 MB.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from contextlib import nullcontext
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, func, insert, literal, select, text
from sqlalchemy.engine import URL

from adapters import schema
from adapters.database import make_engine
from adapters.dialect import plans
from adapters.measure_batch import answers, waits
from benchmarks import installation, versus
from benchmarks.harness import in_process, peak_mb, scratch_database
from benchmarks.statements import add_statements_option, refuse_beside_against, timed
from benchmarks.statements import report_lines as statement_lines
from core.periods import Grain
from core.time import DAY_S
from data.generate import generate
from jobs import measure
from jobs.derive import derive_outcomes
from jobs.schema_setup import init_installation

WINDOW = 7 * DAY_S
GOALS_BASELINE = (10.0, 4.0)  # the full run's time against the baseline: what it must reach, and the aim
NOW = datetime(2026, 12, 1, tzinfo=UTC)
RERUN_AFTER_S = 3600  # the rerun: an hour after the full run, nothing new
FULL_CONVERSATIONS = 870_000  # the generator gives about 1.15 runs and 3.6 messages per conversation
SMALL_MESSAGES = 3  # --shape small: messages kept per conversation
TEXT_BATCH = 20_000
WIDE = installation.SHAPES["wide"]


def _counts(url: str) -> dict[str, int]:
    engine = make_engine(url)
    tables = (schema.conversation, schema.message, schema.agentrun, schema.agentrun_event)
    with engine.connect() as connection:
        counts = {
            t.name: int(connection.execute(select(func.count()).select_from(t)).scalar_one()) for t in tables
        }
    engine.dispose()
    return counts


def _reshape(url: str) -> dict[str, Any]:
    """--shape small: conversations of at most SMALL_MESSAGES messages; half as many runs again, unnamed."""
    engine = make_engine(url)
    r, e, m = schema.agentrun.c, schema.agentrun_event.c, schema.message.c
    with engine.begin() as connection:
        connection.execute(schema.message.delete().where(m.sorting >= SMALL_MESSAGES))
        top_run = int(connection.execute(select(func.max(r.uid))).scalar_one())
        top_event = int(connection.execute(select(func.max(e.uid))).scalar_one())
        copied = select(r.uid).where(r.uid % 2 == 0)
        columns = [
            "uid",
            "uuid",
            "status",
            "configuration_identifier",
            "started_at",
            "finished_at",
            "tstamp",
            "crdate",
        ]
        connection.execute(
            insert(schema.agentrun).from_select(
                columns,
                select(
                    r.uid + top_run,
                    literal("c") + func.substr(r.uuid, 2),
                    r.status,
                    r.configuration_identifier,
                    r.started_at,
                    r.finished_at,
                    r.tstamp,
                    r.crdate,
                ).where(r.uid.in_(copied)),
            )
        )
        event_columns = ["uid", "run", "sequence", "kind", "round", "duration_ms", "payload", "crdate"]
        connection.execute(
            insert(schema.agentrun_event).from_select(
                event_columns,
                select(
                    e.uid + top_event,
                    e.run + top_run,
                    e.sequence,
                    e.kind,
                    e.round,
                    e.duration_ms,
                    e.payload,
                    e.crdate,
                ).where(e.run.in_(copied)),
            )
        )
    engine.dispose()
    return {}


def _floor(url: str) -> dict[str, Any]:
    """Every row measure-rates reads, aggregated inside the database (best of two)."""
    engine = make_engine(url)
    m, e, c, r = schema.message.c, schema.agentrun_event.c, schema.conversation.c, schema.agentrun.c
    queries = [
        select(func.count(), func.sum(func.length(m.payload))),
        select(func.count(), func.sum(func.length(e.payload))),
        select(func.count(), func.sum(func.length(c.run_record))),
        select(func.count(), func.sum(func.length(r.uuid))),
    ]
    best = float("inf")
    with engine.connect() as connection:
        for _ in range(2):
            started = time.perf_counter()
            for query in queries:
                connection.execute(query).one()
            best = min(best, time.perf_counter() - started)
    engine.dispose()
    return {"seconds": best, "peak_mb": peak_mb()}


def _baseline(url: str, uids_file: str) -> dict[str, Any]:
    """The engine's count of every run's events with, into Python, the judged messages' payloads (the
    baseline) and every message's payload (the plain read the goals were first set against); best of two."""
    uids = json.loads(Path(uids_file).read_text())
    engine = make_engine(url)
    m, e = schema.message.c, schema.agentrun_event.c
    best = every = float("inf")
    with engine.connect() as connection:
        dialect = connection.dialect.name

        def counted() -> None:
            connection.execute(select(func.count()).select_from(schema.agentrun)).one()
            counts = select(e.run, func.count()).group_by(e.run).subquery()
            connection.execute(select(func.count(), func.sum(counts.c[1]))).one()

        for _ in range(2):
            started = time.perf_counter()
            for start in range(0, len(uids), TEXT_BATCH):
                chosen = uids[start : start + TEXT_BATCH]
                query = select(m.uid, m.payload).where(plans.in_values(dialect, m.uid, chosen))
                for _row in connection.execute(query):
                    pass
            counted()
            best = min(best, time.perf_counter() - started)
            started = time.perf_counter()
            for _row in connection.execution_options(yield_per=TEXT_BATCH).execute(select(m.uid, m.payload)):
                pass
            counted()
            every = min(every, time.perf_counter() - started)
    engine.dispose()
    return {"seconds": best, "texts": len(uids), "every_message_s": every, "peak_mb": peak_mb()}


def _measure(url: str, uids_file: str | None, later_s: int = 0, statements: int = 0) -> dict[str, Any]:
    """measure-rates `later_s` after NOW, with the time of each of its phases; the uids of the texts it
    judged to `uids_file`. With `statements`, each statement timed and that many of the costliest kept
    (benchmarks.statements)."""
    judged: list[int] = []
    # The texts the text rules judged, for the baseline's read of the same payloads.
    answer_texts, go_on_texts = answers.answer_texts, waits.go_on_texts

    def judged_answers(connection: Connection) -> Any:
        found = answer_texts(connection)
        judged.extend(uid for uid, _, _ in found)
        return found

    def judged_go_on(connection: Connection) -> Any:
        found = go_on_texts(connection)
        judged.extend(uid for uid, _ in found)
        return found

    answers.answer_texts = judged_answers
    waits.go_on_texts = judged_go_on
    engine = make_engine(url)
    with timed(engine) if statements else nullcontext() as times:
        started = time.perf_counter()
        summary = measure.measure_rates(
            engine, now=int(NOW.timestamp()) + later_s, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY)
        )
        seconds = time.perf_counter() - started
    engine.dispose()
    if uids_file is not None:
        Path(uids_file).write_text(json.dumps(sorted(set(judged))))
    figures = {
        "seconds": seconds,
        "conversations": summary.conversations,
        "runs": summary.runs,
        "answers": summary.answers,
        "batches": summary.batches,
        "parts": dict(summary.phases),
        "peak_mb": peak_mb(),
    }
    return figures if times is None else figures | {"statements": times.report(statements)}


def _derive(url: str) -> dict[str, Any]:
    engine = make_engine(url)
    summary = derive_outcomes(engine, now=int(NOW.timestamp()), window_s=WINDOW)
    engine.dispose()
    return {"runs": summary.runs_derived}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    parser.add_argument("--scale", type=float, default=0.2, help="1.0 = 1,000,000 runs, 3,000,000 messages")
    parser.add_argument(
        "--shape",
        choices=("generator", "small", "wide"),
        default="generator",
        help="wide: benchmarks.installation's wide shape, scale x 1,000,000 writes (one conversation a run)",
    )
    add_statements_option(parser, "the full run")
    versus.add_options(parser, "measure-rates")
    args = parser.parse_args(argv)
    refuse_beside_against(parser, args)
    if args.against is not None:
        title = (
            f"measure-rates (both grains, every fact counted) on {args.engine}, scale {args.scale:g}, "
            f"shape {args.shape}"
        )
        timed = versus.measuring(int(NOW.timestamp()), WINDOW)
        return versus.compare(
            "bench_measure", args.engine, args.against, args.rounds, partial(_build, args), title, timed
        )
    with tempfile.TemporaryDirectory(prefix="runrecord-bench-") as directory:
        url, drop = scratch_database(args.engine, Path(directory))
        target = url.render_as_string(hide_password=False)
        uids_file = str(Path(directory) / "judged.json")
        try:
            _build(args, url)
            counts = in_process(_counts, target)
            in_process(_derive, target)
            floor = in_process(_floor, target)
            full = in_process(_measure, target, uids_file, 0, args.statements)
            baseline = in_process(_baseline, target, uids_file)
            rerun = in_process(_measure, target, None, RERUN_AFTER_S)
        finally:
            drop()
    print(json.dumps({"counts": counts, "full": full, "rerun": rerun}, indent=1, default=str))
    print("\n".join(_table(args, counts, floor, baseline, full, rerun)))
    return 0


def _build(args: argparse.Namespace, url: URL) -> None:
    """The installation of the engine, scale and shape asked for, not yet derived."""
    target = url.render_as_string(hide_password=False)
    started = time.perf_counter()
    if args.shape == "wide":
        rows = sum(installation.build(url, installation.full_plan(args.scale, WIDE)).values())
    else:
        conversations = max(int(FULL_CONVERSATIONS * args.scale), 10)
        rows = generate(
            target, create_tables=init_installation, conversations=conversations, seed=1, now=NOW
        ).rows
    print(f"built {rows:,} rows in {time.perf_counter() - started:.0f} s", flush=True)
    if args.shape == "small":
        in_process(_reshape, target)
    if args.engine == "postgresql":
        engine = make_engine(target)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE"))
        engine.dispose()


def _table(
    args: argparse.Namespace,
    counts: dict[str, int],
    floor: dict[str, Any],
    baseline: dict[str, Any],
    full: dict[str, Any],
    rerun: dict[str, Any],
) -> list[str]:
    base, plain = baseline["seconds"], baseline["every_message_s"]
    rows = [
        f"{args.engine}, scale {args.scale}, shape {args.shape}: {counts['tx_nrllm_agentrun']:,} runs, "
        f"{counts['tx_nrmcpagent_conversation']:,} conversations, "
        f"{counts['tx_nrmcpagent_message']:,} messages, "
        f"{counts['tx_nrllm_agentrun_event']:,} events",
        "| what | time | ÷ baseline |",
        "| --- | --- | --- |",
        f"| floor: the engine's own read of every input | {floor['seconds']:.2f} s "
        f"| {floor['seconds'] / base:.2f}× |",
        f"| baseline: {baseline['texts']:,} judged texts read into Python + the engine's count over runs and "
        f"events | {base:.2f} s | 1.00× |",
        f"| plain read: every message payload into Python + the same count | {plain:.2f} s "
        f"| {plain / base:.2f}× |",
        f"| **measure-rates, full** | {full['seconds']:.2f} s | {full['seconds'] / base:.2f}× |",
        f"| measure-rates, rerun an hour later with no new data | {rerun['seconds']:.2f} s "
        f"({100 * rerun['seconds'] / full['seconds']:.1f}% of full) | {rerun['seconds'] / base:.2f}× |",
    ]
    for name, seconds in sorted(full["parts"].items(), key=lambda item: -item[1]):
        rows.append(f"| full, part: {name} | {seconds:.2f} s | {seconds / base:.2f}× |")
    rows.append(f"| peak memory full / rerun | {full['peak_mb']:.0f} / {rerun['peak_mb']:.0f} MB | |")
    met = {True: "met", False: "NOT met"}
    # The goals were first set against a plain read of every message's payload: judged against it too.
    for yardstick, seconds in (("the baseline", base), ("the plain read of every message", plain)):
        ratio = full["seconds"] / seconds
        for goal in GOALS_BASELINE:
            rows.append(f"full within {goal:g}x {yardstick}: {ratio:.1f}x, {met[ratio <= goal]}")
    rows.append(f"rerun under 5% of the full run: {met[rerun['seconds'] < 0.05 * full['seconds']]}")
    rows.append(f"peak memory under 200 MB: {met[max(full['peak_mb'], rerun['peak_mb']) < 200]}")
    if "statements" in full:
        rows += statement_lines(full["statements"], "the full run", full["seconds"])
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
