"""A job of this checkout and of another, back to back on one installation (bench_derive and bench_measure
--against).

Each run starts from the installation as it was built: every `tx_runrecord_` table dropped, the rows the
previous run mirrored into tx_nrllm_call_outcome deleted, then the checkout's own `runrecord init-db` and
`runrecord derive-outcomes --json`, each in its own process; for measure-rates, then the checkout's own
measure-rates of both grains, in a process of its own. The figure compared is the job's own time (the
summary's `seconds`), not the process's start-up. The two jobs alternate, the other checkout's first in odd
rounds, so that neither always runs on a warmer cache.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, inspect, select
from sqlalchemy.engine import URL

from adapters import upstream_schema
from adapters.database import make_engine
from adapters.schema import OUR_PREFIX
from benchmarks.harness import scratch_database
from benchmarks.installation import NOW, WINDOW
from core.table_names import is_table_name
from core.time import DAY_S

# This checkout. Nothing of the tests is imported here: the benchmarks' phases import this module in the
# processes whose peak memory they report.
REPO_ROOT = Path(__file__).resolve().parent.parent


class VersusError(Exception):
    """The other checkout cannot be run, or one of its commands failed."""


@dataclass
class Checkout:
    name: str  # "this", or the other checkout's commit
    directory: Path
    runrecord: list[str]  # the command that runs its `runrecord`
    runs: list[dict[str, Any]] = field(default_factory=list)  # per round: seconds, writes derived, phases
    python: str = sys.executable  # the interpreter that imports its packages

    def seconds(self) -> list[float]:
        return [float(run["seconds"]) for run in self.runs]


Job = Callable[[Checkout, URL], dict[str, Any]]  # one timed run: seconds and phases


def add_options(parser: argparse.ArgumentParser, job: str) -> None:
    """A benchmark's --against CHECKOUT and --rounds N."""
    parser.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help=f"only time this checkout's {job} and another checkout's (its .venv installed), back to back",
    )
    parser.add_argument("--rounds", type=int, default=2, help="with --against: runs of each job")


def compare(
    program: str,
    engine_name: str,
    directory: Path,
    rounds: int,
    build: Callable[[URL], None],
    title: str,
    timed: Job | None = None,
) -> int:
    """Build an installation (`build`) on a scratch database of the engine, time this checkout's job and that
    of the checkout at `directory` on it back to back (`back_to_back`), and print the report under `title`;
    the exit status: 2 when the other checkout cannot be run, 1 when one of its commands failed."""
    try:
        other = checkout(directory)
    except VersusError as error:
        print(f"{program}: {error}", file=sys.stderr)
        return 2
    mine = this_checkout()
    with tempfile.TemporaryDirectory(prefix="runrecord-bench-") as scratch:
        url, drop = scratch_database(engine_name, Path(scratch))
        try:
            build(url)
            back_to_back(url, mine, other, max(rounds, 1), timed)
        except VersusError as error:
            print(f"{program}: {error}", file=sys.stderr)
            return 1
        finally:
            drop()
    print(
        f"{title}: this checkout and {other.name}, back to back, {len(mine.runs)} rounds; seconds of each "
        "round (the job's own time)"
    )
    print("\n".join(report_lines(mine, other)))
    return 0


def checkout(directory: Path) -> Checkout:
    """The checkout at `directory`, run by its own installed command (`make` installs it in .venv)."""
    runrecord = directory / ".venv" / "bin" / "runrecord"
    if not runrecord.is_file():
        raise VersusError(f"no {runrecord}: run `make .venv/.installed` in {directory} first")
    python = str(directory / ".venv" / "bin" / "python")
    return Checkout(_commit(directory), directory, [str(runrecord)], python=python)


def this_checkout() -> Checkout:
    """This checkout, run by the interpreter running the benchmark."""
    return Checkout("this", REPO_ROOT, [sys.executable, "-c", "from jobs.cli import main; main()"])


def _commit(directory: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(directory), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else str(directory)


def back_to_back(url: URL, mine: Checkout, other: Checkout, rounds: int, timed: Job | None = None) -> None:
    """Run the two checkouts' jobs (`timed`, derive-outcomes when None) `rounds` times each on the
    installation at `url`, alternating, each run's figures kept in its checkout's `runs`; the installation is
    left as it was built, without this project's tables."""
    run = timed or _derive
    mark = _last_observed(url)
    for number in range(rounds):
        order = (other, mine) if number % 2 == 0 else (mine, other)
        for job in order:
            reset(url, mark)
            job.runs.append(run(job, url))
    reset(url, mark)


def _last_observed(url: URL) -> int:
    """The greatest tx_nrllm_call_outcome uid before any job ran: the rows after it are the jobs' mirrors."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            rows = upstream_schema.call_outcome
            return int(connection.execute(select(func.coalesce(func.max(rows.c.uid), 0))).scalar_one())
    finally:
        engine.dispose()


def reset(url: URL, mark: int) -> None:
    """Drop every table of this project, whatever its version created, and the rows its jobs mirrored."""
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            quote = connection.dialect.identifier_preparer.quote
            # Names from the database's own list, with our prefix and the shape of a table name only.
            for name in inspect(connection).get_table_names():
                if name.startswith(OUR_PREFIX) and is_table_name(name):
                    connection.exec_driver_sql(f"DROP TABLE {quote(name)}")
            rows = upstream_schema.call_outcome
            if mark == 0 and connection.dialect.name != "sqlite":
                # Built empty: emptied as it was, without the dead rows a DELETE leaves to the next run
                # (PostgreSQL's index entries, InnoDB's purge), which made each round slower than the last.
                connection.exec_driver_sql(f"TRUNCATE TABLE {quote(rows.name)}")
            else:
                connection.execute(delete(rows).where(rows.c.uid > mark))
    finally:
        engine.dispose()


def _derive(job: Checkout, url: URL, now: int = NOW) -> dict[str, Any]:
    target = url.render_as_string(hide_password=False)
    _run(job, "init-db", "--db", target)
    at = datetime.fromtimestamp(now, UTC).isoformat()
    days = str(WINDOW // DAY_S)
    output = _run(job, "derive-outcomes", "--db", target, "--now", at, "--window-days", days, "--json")
    summary = json.loads(output)
    derived = summary["writes"]["derived"]
    return {"seconds": summary["seconds"], "writes": derived, "phases": summary.get("phases", {})}


# measure-rates of both grains, as the scheduler runs it, with its phases (the command writes one grain).
_MEASURE = """
import json, sys
from adapters.database import make_engine
from core.periods import Grain
from jobs.measure import measure_rates
now, window_s = int(sys.argv[2]), int(sys.argv[3])
summary = measure_rates(make_engine(sys.argv[1]), now=now, window_s=window_s, grains=(Grain.WEEK, Grain.DAY))
# A checkout older than the job's phase timer reports its whole time alone.
phases = getattr(summary, "phases", {})
found = {"seconds": summary.seconds, "phases": phases, "conversations": summary.conversations}
print(json.dumps(found))
"""


def measuring(now: int, window_s: int) -> Job:
    """A timed run of measure-rates as of `now`, on the installation derived as of `now` first (untimed)."""

    def run(job: Checkout, url: URL) -> dict[str, Any]:
        _derive(job, url, now)
        target = url.render_as_string(hide_password=False)
        output = _python(job, _MEASURE, target, str(now), str(window_s))
        return dict(json.loads(output))

    return run


def _run(job: Checkout, *arguments: str) -> str:
    return _started(job, [*job.runrecord, *arguments], f"`runrecord {arguments[0]}`")


def _python(job: Checkout, code: str, *arguments: str) -> str:
    return _started(job, [job.python, "-c", code, *arguments], "measure-rates")


def _started(job: Checkout, command: list[str], what: str) -> str:
    # The other checkout imports its own packages: none of this process's search path.
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=job.directory)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise VersusError(f"{what} of {job.name} failed: {last}")
    return done.stdout


def report_lines(mine: Checkout, other: Checkout) -> list[str]:
    """Each round's seconds of both jobs, their ratio in that round, the best round of each, and each part's
    mean."""
    paired = [a / b for a, b in zip(mine.seconds(), other.seconds(), strict=True)]
    label = f"this ÷ {other.name}"
    width = max(len(label), len("setup"), *(len(name) for name in _parts(mine, other))) + 2

    def row(what: str, values: list[float | None]) -> str:
        return f"    {what:<{width}}" + "".join(f"{_shown(value):>10}" for value in values)

    lines = [
        "  seconds, round by round:",
        row(other.name, [*other.seconds()]),
        row("this", [*mine.seconds()]),
        row(label, [*paired]) + f"   ({_slower(paired)})",
        _best(mine, other),
        "  each part, the mean of the rounds:",
        f"    {'':<{width}}{other.name:>10}{'this':>10}",
    ]
    lines += [row(name, [_mean(other, name), _mean(mine, name)]) for name in _parts(mine, other)]
    return lines


def _parts(mine: Checkout, other: Checkout) -> list[str]:
    return list(dict.fromkeys([*other.runs[0]["phases"], *mine.runs[0]["phases"]]))


def _slower(ratios: list[float]) -> str:
    low, high = min(ratios), max(ratios)
    span = f"{low - 1:+.0%}" if round(low, 2) == round(high, 2) else f"{low - 1:+.0%} to {high - 1:+.0%}"
    return f"this is {span} against the other"


def _best(mine: Checkout, other: Checkout) -> str:
    # A machine's noise only ever adds time: the fastest round of each job is the one least disturbed.
    fastest, theirs = min(mine.seconds()), min(other.seconds())
    rounds = f"{len(mine.runs)} round{'s' if len(mine.runs) != 1 else ''}"
    return (
        f"  best of {rounds}: this {fastest:.3f} s, {other.name} {theirs:.3f} s "
        f"({_slower([fastest / theirs])})"
    )


def _mean(job: Checkout, phase: str) -> float | None:
    values = [run["phases"][phase] for run in job.runs if phase in run["phases"]]
    return sum(values) / len(values) if values else None


def _shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
