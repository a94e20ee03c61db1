"""What the fault tests (and benchmarks/bench_faults.py) share: the rows a job stored, an installation put
back as it was before the job ran, a job's command killed with SIGKILL at a chosen moment, and a job's
database connection ended by the server in the middle of a batch.

Only the job's public side is used: its command (`runrecord …`), the tables it writes, and
tx_runrecord_job_run, where every command records that it runs. So the checks hold for any implementation
of the job.

Run as a module, this file is the command with one fault planted:

    python -m tests.db.faults TABLE NTH MARKER -- derive-outcomes --db URL …

runs `runrecord derive-outcomes --db URL …`, and just before the NTH statement that inserts into TABLE, a
second connection ends the connection that statement is about to run on (PostgreSQL:
`pg_terminate_backend`, MariaDB: `KILL CONNECTION`), and MARKER is written, naming the connection ended.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, MetaData, Table, create_engine, event, func, inspect, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool
from sqlalchemy.sql import FromClause

from adapters import schema
from adapters.database import make_engine
from adapters.dialect import session as sqlsession
from adapters.schema import VERSION_TABLE
from data.generate import generate
from jobs.schema_setup import init_installation
from tests.conftest import REPO_ROOT
from tests.db.conftest import fresh_database

OURS = "tx_runrecord_"
WAIT_S = 60.0  # for a command to start, end, or be killed; far beyond what any of them takes
POLL_S = 0.005  # how often the job_run table is read while a command starts: a cheap primary-key read
SURROGATE = "uid"  # an autoincrement key: a row inserted again after a crash may get another one

Row = tuple[Any, ...]


# --- an installation ----------------------------------------------------------------------------------------
@contextmanager
def generated(
    dialect: str, directory: Path, conversations: int, seed: int, now: datetime
) -> Iterator[Engine]:
    """A new database of the dialect holding the demo generator's installation (every kind of row it
    plants, bad ones included), dropped on exit."""
    with fresh_database(dialect, directory) as url:
        generate(url, create_tables=init_installation, conversations=conversations, seed=seed, now=now)
        engine = make_engine(url)
        try:
            yield engine
        finally:
            engine.dispose()


# --- what a job stored --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pristine:
    """The installation before the job ran: every row of our tables, and the newest tx_nrllm_call_outcome
    uid (rows above it are the job's observed rows)."""

    ours: dict[str, list[dict[str, Any]]]
    last_call_outcome: int


def our_tables(connection: Connection) -> list[Table]:
    """Our tables as the database has them now (whatever migration made them), the version table aside."""
    names = [
        name
        for name in inspect(connection).get_table_names()
        if name.startswith(OURS) and name != VERSION_TABLE
    ]
    metadata = MetaData()
    metadata.reflect(connection, only=names)
    return [metadata.tables[name] for name in sorted(names)]


def capture(engine: Engine) -> Pristine:
    """The installation as it is now, to be put back by `restore`."""
    with engine.connect() as connection:
        ours = {
            table.name: [dict(row._mapping) for row in connection.execute(select(table))]
            for table in our_tables(connection)
        }
        last = connection.execute(select(func.max(schema.call_outcome.c.uid))).scalar()
    return Pristine(ours, int(last or 0))


def restore(engine: Engine, pristine: Pristine) -> None:
    """Put our tables and tx_nrllm_call_outcome back as `capture` found them: the job's rows, its
    bookkeeping (whatever tables it keeps) and the job_run rows go."""
    with engine.begin() as connection:
        for table in our_tables(connection):
            rows = pristine.ours.get(table.name, [])
            if [dict(row._mapping) for row in connection.execute(select(table))] == rows:
                continue
            connection.execute(table.delete())
            if rows:
                connection.execute(table.insert(), rows)
        connection.execute(
            schema.call_outcome.delete().where(schema.call_outcome.c.uid > pristine.last_call_outcome)
        )


@dataclass(frozen=True)
class Stored:
    """The rows a job stored, per table, without their surrogate key, as a multiset (a row stored twice
    counts twice)."""

    tables: dict[str, Counter[Row]]
    columns: dict[str, tuple[str, ...]]

    def differences(self, expected: Stored) -> list[str]:
        """What differs from `expected`, a line per table: rows missing, rows too many, rows stored twice."""
        lines = []
        for name in sorted(set(expected.tables) | set(self.tables)):
            want, got = expected.tables.get(name, Counter()), self.tables.get(name, Counter())
            if want == got:
                continue
            missing, extra = want - got, got - want
            twice = [row for row, n in got.items() if n > 1]
            lines.append(
                f"{name}: {sum(missing.values())} rows missing {_examples(missing)}, "
                f"{sum(extra.values())} rows not in the uninterrupted run's {_examples(extra)}, "
                f"{len(twice)} rows stored more than once {_examples(Counter(twice))}"
            )
        return lines

    def count(self, name: str) -> int:
        return sum(self.tables.get(name, Counter()).values())

    def values(self, name: str, column: str) -> list[Any]:
        """One column of a table's rows."""
        at = self.columns[name].index(column)
        return [row[at] for row in self.tables[name].elements()]


def _examples(rows: Counter[Row]) -> str:
    shown = sorted(rows, key=repr)[:2]
    return f"(e.g. {shown})" if shown else ""


def stored(engine: Engine, names: Sequence[str], pristine: Pristine) -> Stored:
    """Every row of our tables `names` (every column but the surrogate key), and the observed rows the job
    added to tx_nrllm_call_outcome."""
    with engine.connect() as connection:
        tables = {table.name: table for table in our_tables(connection)}
        sources: dict[str, FromClause] = {name: tables[name] for name in names}
        sources[schema.call_outcome.name] = (
            select(schema.call_outcome)
            .where(schema.call_outcome.c.uid > pristine.last_call_outcome)
            .subquery()
        )
        columns = {
            name: tuple(column.name for column in source.c if column.name != SURROGATE)
            for name, source in sources.items()
        }
        found = {
            name: Counter(
                tuple(row) for row in connection.execute(select(*(source.c[c] for c in columns[name])))
            )
            for name, source in sources.items()
        }
    return Stored(found, columns)


# --- a command, killed --------------------------------------------------------------------------------------
def command(*args: str) -> list[str]:
    """`runrecord ARGS…` as this interpreter runs it."""
    return [sys.executable, "-c", "from jobs.cli import main; main()", *args]


def run(arguments: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run a process to its end, output kept."""
    return subprocess.run(
        list(arguments), cwd=REPO_ROOT, capture_output=True, text=True, timeout=WAIT_S, check=False
    )


def _running(engine: Engine, job: str) -> bool:
    with engine.connect() as connection:
        found = connection.execute(
            select(schema.job_run.c.uid)
            .where(schema.job_run.c.job == job, schema.job_run.c.status == "running")
            .limit(1)
        ).first()
    return found is not None


def _started(process: subprocess.Popen[str], engine: Engine, job: str) -> float:
    """Wait until the command has recorded its job as running; the moment it was seen."""
    deadline = time.monotonic() + WAIT_S
    while not _running(engine, job):
        if process.poll() is not None:
            raise AssertionError(f"{job} ended before it was seen running: {process.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{job} was never seen running")
        time.sleep(POLL_S)
    return time.monotonic()


def timed(arguments: Sequence[str], engine: Engine, job: str) -> float:
    """Run the command to its end; the seconds from its job being seen running to the process's end."""
    process = subprocess.Popen(
        list(arguments), cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    began = _started(process, engine, job)
    stdout, stderr = process.communicate(timeout=WAIT_S)
    seconds = time.monotonic() - began
    assert process.returncode == 0, stderr or stdout
    return seconds


@dataclass(frozen=True)
class Kill:
    """One SIGKILL: how long after the job was seen running, and whether the process still ran then."""

    after_s: float
    while_running: bool


def kill_at(arguments: Sequence[str], engine: Engine, job: str, after_s: float) -> Kill:
    """Start the command, and SIGKILL it `after_s` seconds after its job was seen running."""
    process = subprocess.Popen(
        list(arguments), cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True
    )
    try:
        began = _started(process, engine, job)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=max(0.0, began + after_s - time.monotonic()))
        while_running = process.poll() is None
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=WAIT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return Kill(after_s, while_running)


def moments(rng: Any, span_s: float, kills: int) -> list[float]:
    """`kills` random moments within a job of `span_s` seconds, one in each equal part of it, so that the
    kills spread over the whole job whatever the draw."""
    return [span_s * (part + rng.random()) / kills for part in range(kills)]


# --- a connection, ended by the server ----------------------------------------------------------------------
def terminating(table: str, nth: int, marker: Path, *args: str) -> list[str]:
    """`runrecord ARGS…` with its connection ended before the `nth` insert into `table` (see the module)."""
    return [sys.executable, "-m", "tests.db.faults", table, str(nth), str(marker), "--", *args]


def _inserts_into(table: str) -> re.Pattern[str]:
    # Any dialect's insert, insert-or-ignore or upsert into exactly that table (not one named after it).
    return re.compile(
        rf"\b(?:INSERT|REPLACE)\s+(?:OR\s+\w+\s+|IGNORE\s+)?INTO\s+[`\"]?{re.escape(table)}[`\"]?(?!\w)",
        re.IGNORECASE,
    )


def _end_connection(connection: Connection, marker: Path) -> None:
    """End the connection from a second one, as an administrator would, and wait until it is gone."""
    dbapi_connection: Any = connection.connection.dbapi_connection
    with _second_connection(connection.engine) as admin:
        if connection.dialect.name == "postgresql":
            backend = int(dbapi_connection.info.backend_pid)
            ended = admin.execute(text("SELECT pg_terminate_backend(:pid, 10000)"), {"pid": backend}).scalar()
            assert ended, f"backend {backend} did not end"
        else:
            backend = int(dbapi_connection.thread_id())
            admin.exec_driver_sql(f"KILL CONNECTION {backend}")
    marker.write_text(f"ended connection {backend}\n", encoding="utf-8")


@contextmanager
def _second_connection(engine: Engine) -> Iterator[Connection]:
    admin = create_engine(engine.url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            yield connection
    finally:
        admin.dispose()


def plant_termination(table: str, nth: int, marker: Path) -> None:
    """In this process, end the connection of the `nth` statement that inserts into `table`, just before it
    runs: the statement, and its transaction, meet a connection the server has ended."""
    pattern = _inserts_into(table)
    seen = 0

    def before(connection: Connection, _cursor: Any, statement: str, *_args: Any) -> None:
        nonlocal seen
        if pattern.search(statement):
            seen += 1
            if seen == nth:
                _end_connection(connection, marker)

    event.listen(Engine, "before_cursor_execute", before)


def _main(argv: list[str]) -> None:
    table, nth, marker, separator, *arguments = argv
    assert separator == "--", "usage: python -m tests.db.faults TABLE NTH MARKER -- COMMAND ARGS…"
    plant_termination(table, int(nth), Path(marker))
    from jobs.cli import main

    sys.argv = ["runrecord", *arguments]
    main()


if __name__ == "__main__":
    _main(sys.argv[1:])


@dataclass(frozen=True)
class Attempt:
    """An installation, its job's command line (`command`), and the rows an uninterrupted run stored."""

    engine: Engine
    pristine: Pristine
    expected: Stored
    arguments: Sequence[str]
    job: str
    output: Sequence[str]


# A kill that finds the job already over (this run quicker than the timed one, as on a machine whose load
# fell) is tried again at half its moment, at most this many times.
RETRIES = 2


def killed_and_rerun(attempt: Attempt, moments_s: Sequence[float], seed: int) -> tuple[list[Kill], list[str]]:
    """Kill the job at each moment, run it again to the end, and say each way its rows differ from the
    uninterrupted run's: the kills and the differences, each naming the seed and the moment."""
    kills: list[Kill] = []
    failures: list[str] = []
    for number, first in enumerate(moments_s, start=1):
        for moment in (first / 2**retry for retry in range(RETRIES + 1)):
            kill, when_killed, differences = _kill_and_rerun(attempt, moment)
            kills.append(kill)
            what = f"kill {number} (seed {seed}, {moment:.3f} s after the job was seen to run; {when_killed})"
            failures += [f"{what}: {line}" for line in differences]
            if kill.while_running:
                break
    return kills, failures


def _kill_and_rerun(attempt: Attempt, moment: float) -> tuple[Kill, str, list[str]]:
    """One kill at `moment` and the run after it: the kill, what was stored when killed, and each way the
    rows differ from the uninterrupted run's."""
    restore(attempt.engine, attempt.pristine)
    kill = kill_at(attempt.arguments, attempt.engine, attempt.job, moment)
    left = stored(attempt.engine, attempt.output, attempt.pristine)
    finished = run(attempt.arguments)
    assert finished.returncode == 0, finished.stderr
    differences = stored(attempt.engine, attempt.output, attempt.pristine).differences(attempt.expected)
    uninterrupted = ", ".join(f"{name} {attempt.expected.count(name)}" for name in attempt.output)
    when_killed = (
        "stored when killed: "
        + ", ".join(f"{name} {left.count(name)}" for name in attempt.output)
        + f" of {uninterrupted}; the process {'running' if kill.while_running else 'already ended'}"
    )
    return kill, when_killed, differences


# --- MariaDB's tables in memory, full -----------------------------------------------------------------------
def memory_full(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """MariaDB's batch tables in memory capped at the least it takes (16 KB), so that a job's first batch
    fills one; the list records each answer of adapters.dialect.session.spill_to_disk."""
    monkeypatch.setattr(sqlsession, "MEMORY_TABLE_BYTES", 16_384)
    answers: list[bool] = []
    spill = sqlsession.spill_to_disk

    def recorded(connection: Connection, error: DBAPIError) -> bool:
        answers.append(spill(connection, error))
        return answers[-1]

    monkeypatch.setattr(sqlsession, "spill_to_disk", recorded)
    return answers
