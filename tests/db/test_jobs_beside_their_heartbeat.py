"""A job's own heartbeat, renewed from another connection while the job writes, never fails the job
(adapters.dialect.session.lock_on_begin): on SQLite a transaction that has read and then writes cannot wait
for a writer that committed meanwhile, so the jobs take the write lock as each transaction begins."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from adapters import job_liveness
from adapters.database import make_engine, parse_url
from data.generate import default_manifest, generate
from jobs import derive, measure
from jobs.job_log import JobResult, Status, execute
from jobs.schema_setup import init_installation

NOW = datetime(2026, 11, 29, tzinfo=UTC)
BEAT_S = 0.002  # a beat every few milliseconds: many land inside the jobs' transactions


@pytest.mark.parametrize(
    ("job", "run_job"),
    [("derive-outcomes", derive.run_job), ("measure-rates", measure.run_job)],
)
def test_a_heartbeat_renewed_while_the_job_writes_never_fails_the_job(
    empty_db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    job: str,
    run_job: Callable[..., JobResult],
) -> None:
    generate(
        empty_db_url,
        create_tables=init_installation,
        conversations=300,
        seed=5,
        now=NOW,
        manifest=default_manifest(parse_url(empty_db_url)),
    )
    beating = job_liveness.heartbeat

    def often(engine: Any, uid: int, *, every_s: float = BEAT_S) -> Any:
        return beating(engine, uid, every_s=BEAT_S)

    monkeypatch.setattr(job_liveness, "heartbeat", often)
    engine = make_engine(empty_db_url)
    try:
        execution = execute(engine, job, lambda: run_job(empty_db_url, now=NOW))
    finally:
        engine.dispose()

    assert execution.status is Status.OK, execution.result.message
