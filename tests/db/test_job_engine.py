"""The engine the scheduler's jobs run on (adapters.database.job_engine): one per URL in a process, kept from
one run of a job to the next with the statements it compiled; its connections are closed when no job runs on
it any more, never while one does."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.engine.interfaces import CacheStats

from adapters import schema
from adapters.database import job_engine, make_engine
from jobs import watch
from jobs.schema_setup import init_db

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def test_a_jobs_second_run_in_a_process_compiles_none_of_its_statements_again(installation_url: str) -> None:
    watch.run_job(installation_url, now=NOW)
    with job_engine(installation_url) as engine:
        pass
    compiled: Counter[CacheStats] = Counter()

    def count(
        _connection: Any, _cursor: Any, _statement: str, _parameters: Any, context: Any, _many: bool
    ) -> None:
        compiled[context.cache_hit] += 1

    event.listen(engine, "before_cursor_execute", count)
    try:
        watch.run_job(installation_url, now=NOW)
    finally:
        event.remove(engine, "before_cursor_execute", count)

    with job_engine(installation_url) as again:
        assert again is engine
    assert compiled[CacheStats.CACHE_HIT] > 0 and compiled[CacheStats.CACHE_MISS] == 0, compiled


def test_the_connections_are_closed_when_the_last_job_on_the_engine_ends_and_not_before(
    installation_url: str,
) -> None:
    with job_engine(installation_url) as first:
        with job_engine(installation_url) as second:
            assert second is first
            with second.connect() as connection:
                connection.execute(text("SELECT 1"))
        # The other job still runs: its pool keeps the connection it may take again.
        pool = first.pool
        assert pool.checkedin() == 1
    assert pool.checkedin() == 0 and first.pool is not pool and first.pool.checkedin() == 0


def test_a_relative_sqlite_file_is_the_file_of_the_directory_the_job_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    relative = "sqlite:///installation.sqlite"
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        engine = make_engine(relative)
        init_db(engine, with_upstream=True)
        engine.dispose()

    for name in ("first", "second"):
        monkeypatch.chdir(tmp_path / name)
        watch.run_job(relative, now=NOW)

    for name in ("first", "second"):
        engine = make_engine(f"sqlite:///{tmp_path / name / 'installation.sqlite'}")
        with engine.connect() as connection:
            readings = connection.execute(select(func.count()).select_from(schema.health)).scalar_one()
        engine.dispose()
        assert readings == 1, name
