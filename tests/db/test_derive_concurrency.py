"""Two derive-outcomes processes at once: every row exactly once (003_…: the answer is final).

On MariaDB and PostgreSQL the test holds a lock on tx_runrecord_run_outcome until both processes wait to
insert the same first page, so that the race is certain rather than likely: both have selected the same due
runs, and the unique key on run_uid has to decide which of them writes the rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, func, select, text

from adapters import schema
from core.time import DAY_S
from data.builder import Installation

REPO_ROOT = Path(__file__).resolve().parents[2]
DAY = DAY_S
NOW = 1_790_000_000
T = NOW - 40 * DAY
RUNS = 30
BATCH = 4
WAIT_S = 60


def _installation(engine: Engine) -> dict[str, str]:
    """RUNS runs, each writing one or two pages, every third page edited by hand; the outcome per uuid."""
    expected: dict[str, str] = {}
    with engine.begin() as connection:
        site = Installation(connection)
        for index in range(RUNS):
            at = T + index * 3600
            chat = site.conversation(configuration="content-assistant", at=at - 60)
            chat.user("Bitte überarbeite die Seite.", at=at - 60)
            run = chat.run()
            pages = [site.page(f"Seite {index}-{n}", at=T - 30 * DAY) for n in range(1 + index % 2)]
            for n, page in enumerate(pages):
                run.propose("update_record", page, fields=("title",))
                run.approve(at=at + n * 60)
            run.answer("Gespeichert.")
            run.finish()
            chat.close()
            if index % 3 == 0:
                site.human_edit(pages[0], {"description": "von Hand"}, at=at + DAY)
            if index % 5 == 0:
                run.call_outcome("helpful", at=at + 600)
            expected[run.uuid] = "edited" if index % 3 == 0 else "accepted_unchanged"
        site.finish()
    return expected


def _start(url: str) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        "-c",
        "from jobs.cli import main; main()",
        "derive-outcomes",
        "--db",
        url,
        "--now",
        datetime.fromtimestamp(NOW, UTC).isoformat(),
        "--batch-size",
        str(BATCH),
        "--json",
    ]
    return subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@contextmanager
def _held_run_outcome(engine: Engine, dialect: str) -> Iterator[Connection]:
    """Readers may read tx_runrecord_run_outcome, nobody may insert into it, until the block ends."""
    with engine.connect() as connection:
        if dialect == "postgresql":
            connection.exec_driver_sql("LOCK TABLE tx_runrecord_run_outcome IN SHARE MODE")
        else:
            connection.exec_driver_sql("LOCK TABLES tx_runrecord_run_outcome READ")
        try:
            yield connection
        finally:
            if dialect == "postgresql":
                connection.commit()
            else:
                connection.exec_driver_sql("UNLOCK TABLES")


def _waiting_inserts(engine: Engine, dialect: str) -> int:
    with engine.connect() as connection:
        if dialect == "postgresql":
            query = text(
                "SELECT count(*) FROM pg_locks "
                "WHERE relation = 'tx_runrecord_run_outcome'::regclass AND NOT granted"
            )
        else:
            query = text(
                "SELECT count(*) FROM information_schema.processlist "
                "WHERE db = DATABASE() AND state LIKE 'Waiting for table%lock' AND info LIKE 'INSERT%'"
            )
        return int(connection.execute(query).scalar_one())


def _finish(process: subprocess.Popen[str]) -> dict[str, Any]:
    stdout, stderr = process.communicate(timeout=WAIT_S)
    assert process.returncode == 0, stderr
    summary: dict[str, Any] = json.loads(stdout)
    return summary


def test_two_processes_at_once_write_each_row_exactly_once(
    installation_engine: Engine, installation_url: str, dialect: str
) -> None:
    expected = _installation(installation_engine)
    forced = dialect in ("mariadb", "postgresql")

    if forced:
        with _held_run_outcome(installation_engine, dialect):
            processes = [_start(installation_url), _start(installation_url)]
            deadline = time.monotonic() + WAIT_S
            while _waiting_inserts(installation_engine, dialect) < 2:
                assert all(p.poll() is None for p in processes), [p.communicate() for p in processes]
                assert time.monotonic() < deadline, "the two processes never both waited to insert"
                time.sleep(0.05)
    else:
        processes = [_start(installation_url), _start(installation_url)]
    summaries = [_finish(process) for process in processes]

    with installation_engine.connect() as connection:
        runs = dict(
            connection.execute(
                select(schema.run_outcome.c.correlation_id, schema.run_outcome.c.outcome)
            ).all()
        )
        run_rows = connection.execute(select(func.count()).select_from(schema.run_outcome)).scalar_one()
        events = list(connection.execute(select(schema.write_outcome.c.event_uid)).scalars())
        observed = Counter(
            connection.execute(
                select(schema.call_outcome.c.correlation_id).where(schema.call_outcome.c.outcome != "helpful")
            ).scalars()
        )
        helpful = connection.execute(
            select(func.count())
            .select_from(schema.call_outcome)
            .where(schema.call_outcome.c.outcome == "helpful")
        ).scalar_one()
    assert runs == expected and run_rows == RUNS
    assert len(events) == len(set(events)) == RUNS + RUNS // 2
    assert observed == Counter(expected.keys())  # one observed row per run, however many processes derived it
    assert helpful == len(range(0, RUNS, 5))
    assert sum(s["runs"]["derived"] for s in summaries) == RUNS
    assert sum(s["call_outcome"]["mirrored"] for s in summaries) == RUNS
    if forced:
        # Both selected the same first page; the one that inserted second wrote none of its rows.
        assert sum(s["runs"]["derived_elsewhere"] for s in summaries) >= BATCH


def test_a_second_process_after_the_first_derives_nothing_again(
    installation_engine: Engine, installation_url: str
) -> None:
    expected = _installation(installation_engine)

    first = _finish(_start(installation_url))
    second = _finish(_start(installation_url))

    assert first["runs"]["derived"] == RUNS and second["runs"]["derived"] == 0
    with installation_engine.connect() as connection:
        observed = Counter(
            connection.execute(
                select(schema.call_outcome.c.correlation_id).where(schema.call_outcome.c.outcome != "helpful")
            ).scalars()
        )
    assert observed == Counter(expected.keys())
