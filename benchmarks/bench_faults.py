"""derive-outcomes killed with SIGKILL at random moments, each time checked against an uninterrupted run.

    python -m benchmarks.bench_faults --engine sqlite --scale 0.01
    python -m benchmarks.bench_faults --engine postgresql --scale 0.01 --kills 20 --seed 7

Builds the installation of benchmarks/bench_derive.py (`scale`, `shape`) into a new database, runs
`runrecord derive-outcomes` once to its end (the reference rows, and how long the job takes), then `kills`
times: the installation is put back as it was before any run, the command started and killed with SIGKILL at
a random moment of the job (one in each equal part of it, drawn from `seed`), and run again to its end; the
rows of tx_runrecord_write_outcome, tx_runrecord_run_outcome and the observed rows of tx_nrllm_call_outcome
must then be those of the reference run, none twice (tests/db/faults.py compares them). One line per kill;
the exit code is 1 when any kill left other rows.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine

from adapters import schema
from adapters.database import make_engine
from benchmarks.harness import scratch_database
from benchmarks.installation import NOW, SHAPES, build, full_plan
from tests.db import faults

JOB = "derive-outcomes"
OUTPUT = (schema.write_outcome.name, schema.run_outcome.name)  # and the observed tx_nrllm_call_outcome rows
RUNS = schema.run_outcome.name


def _arguments(engine: Engine, batch_size: int) -> list[str]:
    url = engine.url.render_as_string(hide_password=False)
    now = datetime.fromtimestamp(NOW, UTC).isoformat()
    return faults.command(JOB, "--db", url, "--now", now, "--batch-size", str(batch_size), "--json")


def _kill_once(
    engine: Engine, arguments: list[str], pristine: faults.Pristine, expected: faults.Stored, moment: float
) -> tuple[faults.Kill, int, float, list[str]]:
    """One attempt: killed at `moment`, run again; the kill, the runs left stored, the rerun's seconds and
    how the rows differ from the reference."""
    faults.restore(engine, pristine)
    kill = faults.kill_at(arguments, engine, JOB, moment)
    left = faults.stored(engine, OUTPUT, pristine).count(RUNS)
    started = time.perf_counter()
    finished = faults.run(arguments)
    rerun_s = time.perf_counter() - started
    if finished.returncode != 0:
        return kill, left, rerun_s, [f"the next run failed: {finished.stderr.strip()}"]
    return kill, left, rerun_s, faults.stored(engine, OUTPUT, pristine).differences(expected)


def run_kills(engine: Engine, batch_size: int, kills: int, seed: int) -> int:
    """The reference run and `kills` killed ones; a line each, and a summary; how many left other rows."""
    arguments = _arguments(engine, batch_size)
    pristine = faults.capture(engine)
    span = faults.timed(arguments, engine, JOB)
    expected = faults.stored(engine, OUTPUT, pristine)
    total = expected.count(RUNS)
    print(
        f"uninterrupted: {total:,} runs, {expected.count(schema.write_outcome.name):,} writes, "
        f"job {span:.2f} s"
    )
    different = running = 0
    for number, moment in enumerate(faults.moments(random.Random(seed), span, kills), start=1):
        kill, left, rerun_s, differences = _kill_once(engine, arguments, pristine, expected, moment)
        running += kill.while_running
        different += bool(differences)
        state = "running" if kill.while_running else "already ended"
        verdict = "identical, none twice" if not differences else "DIFFERENT: " + "; ".join(differences)
        print(
            f"kill {number:2}/{kills} at {moment:6.3f} s ({moment / span:4.0%} of the job, process {state}): "
            f"{left:,} of {total:,} runs stored; next run {rerun_s:.2f} s: {verdict}",
            flush=True,
        )
    print(
        f"{kills} kills (seed {seed}): {running} while the job ran, {kills - different} identical, "
        f"{different} different"
    )
    return different


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "mariadb"), default="sqlite")
    parser.add_argument("--scale", type=float, default=0.01, help="as bench_derive: 1.0 = 1,000,000 writes")
    parser.add_argument("--shape", choices=tuple(SHAPES), default="default")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=500, help="runs per batch of the job")
    parser.add_argument("--seed", type=int, default=1, help="the same seed kills at the same moments")
    args = parser.parse_args(argv)
    print(
        f"derive-outcomes killed {args.kills} times on {args.engine}, scale {args.scale:g}, "
        f"shape {args.shape}, batches of {args.batch_size:,} runs, seed {args.seed}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="runrecord-faults-") as directory:
        url, drop = scratch_database(args.engine, Path(directory))
        try:
            build(url, full_plan(args.scale, SHAPES[args.shape]))
            engine = make_engine(url)
            try:
                different = run_kills(engine, args.batch_size, args.kills, args.seed)
            finally:
                engine.dispose()
        finally:
            drop()
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
