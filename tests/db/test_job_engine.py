"""The engine the scheduler's jobs run on (adapters.database.job_engine): one per URL in a process, kept from
one run of a job to the next with the statements it compiled; its connections are closed when no job runs on
it any more, never while one does."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, text

from adapters.database import job_engine
from jobs import watch

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def _compiled(engine: Engine) -> int:
    """How many statements the engine keeps compiled (SQLAlchemy's cache of them, per engine)."""
    cache = engine._compiled_cache
    assert cache is not None
    return len(cache)


def test_a_jobs_second_run_in_a_process_finds_its_statements_compiled_by_the_first(
    installation_url: str,
) -> None:
    watch.run_job(installation_url, now=NOW)
    with job_engine(installation_url) as engine:
        compiled = _compiled(engine)

    watch.run_job(installation_url, now=NOW)

    with job_engine(installation_url) as again:
        assert again is engine
        assert _compiled(again) == compiled > 0


def test_the_connections_are_closed_when_the_last_job_on_the_engine_ends_and_not_before(
    installation_url: str,
) -> None:
    with job_engine(installation_url) as first:
        with job_engine(installation_url) as second:
            assert second is first
            with second.connect() as connection:
                connection.execute(text("SELECT 1"))
        # The other job still runs: its pool keeps the connection it may take again.
        assert first.pool.checkedin() == 1
        pool = first.pool
    assert first.pool is not pool and first.pool.checkedin() == 0
