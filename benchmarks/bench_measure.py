"""Benchmark of `measure-rates` against a plain scan of the rows it reads, and of a rerun with no new data.

    python -m benchmarks.bench_measure --engine sqlite --scale 0.05
    python -m benchmarks.bench_measure --engine postgresql --scale 0.1

Builds an installation of `scale` x 1,000,000 runs (about 870,000 conversations, 3,100,000 messages and
15,500,000 events) with the demo generator itself (data/generate.py: the builder's rows and
scenarios, spread over 120 days), derives the outcomes (not timed), then measures, each in a fresh process on
the same engine (peak memory is that process's own):

* scan: a plain aggregate over every row measure-rates reads — count(*) and sum(length(...)) of the message
  and event payloads, the conversations' run records and the runs' uuids, inside the database (best of two);
* read: the same rows fetched into the client, unparsed (events as per-run counts, as the job reads them);
* two parts of the job that no query can remove, measured alone on the rows in memory: reading every
  message payload with core (json and core.transcript, as stored_message does) and core.claims' claim rule
  over every assistant message (the job runs it on the completed answers only, one per run);
* full: measure-rates on an installation it has never measured (every fact counted, every period written);
* rerun: measure-rates again with no new data (only the open periods are written).

Goals: full within 3x the scan; the rerun under 5% of the full run; peak memory flat (it does not grow with
the scale). The report says of each whether this run met it, and with the two parts above why the first
cannot be met while the message reading and the claim rules stay in core, in Python (DESIGN.md).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from adapters import schema
from adapters.database import make_engine
from benchmarks.harness import in_process, peak_mb, scratch_database
from core.answers import stored_message
from core.claims import claims_change
from core.periods import Grain
from core.time import DAY_S
from core.transcript import Role, TranscriptMessage
from data.generate import generate
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from jobs.schema_setup import init_installation

DAY = DAY_S
WINDOW = 7 * DAY
NOW = datetime(2026, 12, 1, tzinfo=UTC)
FULL_CONVERSATIONS = 870_000  # the generator gives about 1.15 runs and 3.6 messages per conversation


def _counts(url: str) -> dict[str, int]:
    engine = make_engine(url)
    tables = (schema.conversation, schema.message, schema.agentrun, schema.agentrun_event)
    with engine.connect() as connection:
        counts = {
            t.name: int(connection.execute(select(func.count()).select_from(t)).scalar_one()) for t in tables
        }
    engine.dispose()
    return counts


def _scan(url: str) -> dict[str, Any]:
    """Every row measure-rates reads, aggregated: the floor a full measurement is compared with."""
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


def _read(url: str) -> dict[str, Any]:
    """Every row measure-rates reads, fetched into the client unparsed (messages, conversations and runs as
    the job selects them, events as their per-run counts): the floor of any measurement that reads the
    messages outside the database."""
    engine = make_engine(url)
    m, e, c, r = schema.message.c, schema.agentrun_event.c, schema.conversation.c, schema.agentrun.c
    queries = [
        select(m.uid, m.conversation, m.sorting, m.role, m.crdate, m.payload),
        select(c.uid, c.skill_identifier, c.approval_run_uuid, c.run_record),
        select(r.uid, r.uuid, r.status, r.configuration_identifier, r.finished_at, r.tstamp, r.started_at),
        select(e.run, func.count(), func.min(e.crdate), func.max(e.sequence)).group_by(e.run),
    ]
    best = float("inf")
    with engine.connect() as connection:
        for _ in range(2):
            started = time.perf_counter()
            for query in queries:
                for _row in connection.execute(query.execution_options(yield_per=5_000)):
                    pass
            best = min(best, time.perf_counter() - started)
    engine.dispose()
    return {"seconds": best, "peak_mb": peak_mb()}


def _parts(url: str) -> dict[str, Any]:
    """The message reading and the claim rule, timed alone on rows already in memory (best of two each)."""
    engine = make_engine(url)
    m = schema.message.c
    with engine.connect() as connection:
        rows = connection.execute(select(m.uid, m.sorting, m.role, m.crdate, m.payload)).tuples().all()
    engine.dispose()
    reading = claiming = float("inf")
    texts: list[str] = []
    for _ in range(2):
        started = time.perf_counter()
        messages = [stored_message(*row) for row in rows]
        reading = min(reading, time.perf_counter() - started)
        texts = [
            message.read.content
            for message in messages
            if isinstance(message.read, TranscriptMessage) and message.read.role is Role.ASSISTANT
        ]
        started = time.perf_counter()
        for text in texts:
            claims_change(text)
        claiming = min(claiming, time.perf_counter() - started)
    return {"messages": len(rows), "reading_s": reading, "assistant": len(texts), "claims_s": claiming}


def _derive(url: str) -> dict[str, Any]:
    engine = make_engine(url)
    summary = derive_outcomes(engine, now=int(NOW.timestamp()), window_s=WINDOW)
    engine.dispose()
    return {"seconds": summary.seconds, "runs": summary.runs_derived}


def _measure(url: str) -> dict[str, Any]:
    engine = make_engine(url)
    started = time.perf_counter()
    summary = measure_rates(engine, now=int(NOW.timestamp()), window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY))
    seconds = time.perf_counter() - started
    engine.dispose()
    return {
        "seconds": seconds,
        "conversations": summary.conversations,
        "runs": summary.runs,
        "answers": summary.answers,
        "periods": [
            {
                "grain": p.grain.value,
                "open": p.open_periods,
                "new": p.new_periods,
                "kept": p.kept_periods,
                "rows": p.rows,
            }
            for p in summary.periods
        ],
        "peak_mb": peak_mb(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    parser.add_argument("--scale", type=float, default=1.0, help="1.0 = 1,000,000 runs, 3,000,000 messages")
    args = parser.parse_args(argv)
    conversations = max(int(FULL_CONVERSATIONS * args.scale), 10)
    with tempfile.TemporaryDirectory(prefix="runrecord-bench-") as directory:
        url, drop = scratch_database(args.engine, Path(directory))
        target = url.render_as_string(hide_password=False)
        try:
            report = generate(
                target, create_tables=init_installation, conversations=conversations, seed=1, now=NOW
            )
            print(f"built {report.rows:,} rows in {report.seconds:.0f} s", flush=True)
            if args.engine == "postgresql":
                engine = make_engine(target)
                with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                    connection.exec_driver_sql("VACUUM ANALYZE")
                engine.dispose()
            counts = in_process(_counts, target)
            derived = in_process(_derive, target)
            scan = in_process(_scan, target)
            read = in_process(_read, target)
            parts = in_process(_parts, target)
            full = in_process(_measure, target)
            rerun = in_process(_measure, target)
        finally:
            drop()
    result = {
        "engine": args.engine,
        "scale": args.scale,
        "rows": counts,
        "derived_runs": derived["runs"],
        "scan_s": round(scan["seconds"], 3),
        "full_s": round(full["seconds"], 3),
        "full_vs_scan": round(full["seconds"] / scan["seconds"], 2),
        "read_s": round(read["seconds"], 3),
        "full_vs_read": round(full["seconds"] / read["seconds"], 2),
        "parts": {
            "messages": parts["messages"],
            "reading_s": round(parts["reading_s"], 3),
            "reading_vs_scan": round(parts["reading_s"] / scan["seconds"], 2),
            "assistant_messages": parts["assistant"],
            "claims_s": round(parts["claims_s"], 3),
            "claims_per_answer_us": round(1e6 * parts["claims_s"] / max(parts["assistant"], 1), 2),
        },
        "rerun_s": round(rerun["seconds"], 3),
        "rerun_vs_full": round(rerun["seconds"] / full["seconds"], 4),
        "full_read": {k: full[k] for k in ("conversations", "runs", "answers")},
        "full_periods": full["periods"],
        "rerun_read": {k: rerun[k] for k in ("conversations", "runs", "answers")},
        "rerun_periods": rerun["periods"],
        "full_peak_mb": round(full["peak_mb"], 1),
        "rerun_peak_mb": round(rerun["peak_mb"], 1),
    }
    print(json.dumps(result, indent=2))
    print("\n".join(_analysis(result)))
    return 0


def _analysis(result: dict[str, Any]) -> list[str]:
    """Whether this run met each goal and, for the scan goal, what the mandated parts cost alone."""
    parts, scan = result["parts"], result["scan_s"]
    answers = result["full_read"]["answers"]
    claims = parts["claims_per_answer_us"] * answers / 1e6
    floor = parts["reading_s"] + claims
    met = {True: "met", False: "NOT met"}
    return [
        f"full within 3x the scan: {met[result['full_vs_scan'] <= 3]} ({result['full_vs_scan']}x; "
        f"{result['full_vs_read']}x the plain read into the client)",
        f"rerun under 5% of the full run: {met[result['rerun_vs_full'] < 0.05]} "
        f"({100 * result['rerun_vs_full']:.1f}%)",
        f"mandated parts alone: reading {parts['messages']:,} message payloads in core "
        f"{parts['reading_s']:.2f} s ({parts['reading_vs_scan']}x the scan) + the claim rule on "
        f"{answers:,} completed answers ~{claims:.2f} s ({parts['claims_per_answer_us']} us each) = "
        f"{floor / scan:.1f}x the scan before a run, an event or a fact is read or written",
    ]


if __name__ == "__main__":
    raise SystemExit(main())
