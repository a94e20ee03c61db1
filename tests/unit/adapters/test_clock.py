"""runrecord's clock (adapters.clock): RUNRECORD_NOW fixes it; unset, the system clock runs it."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters import clock
from adapters.database import RunrecordError


class _SystemClock:
    """A system clock that reads one instant."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def time(self) -> float:
        return self.seconds


def test_runrecord_now_fixes_the_clock_at_its_instant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNRECORD_NOW", "2026-11-23T00:20:00+01:00")

    assert clock.now() == datetime(2026, 11, 22, 23, 20, tzinfo=UTC)
    assert clock.unix() == int(datetime(2026, 11, 22, 23, 20, tzinfo=UTC).timestamp())


def test_an_instant_without_an_offset_is_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNRECORD_NOW", "2026-11-29 23:40")

    assert clock.now().utcoffset() == timedelta(0)
    assert clock.now() == datetime(2026, 11, 29, 23, 40, tzinfo=UTC)


def test_unset_the_system_clock_runs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUNRECORD_NOW", raising=False)
    monkeypatch.setattr(clock, "time", _SystemClock(1_796_000_000.75))

    assert clock.now() == datetime.fromtimestamp(1_796_000_000.75, UTC)
    assert clock.unix() == 1_796_000_000
    assert clock.now().tzinfo is not None and clock.now().utcoffset() == UTC.utcoffset(None)


def test_a_malformed_instant_is_one_error_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNRECORD_NOW", "next tuesday")

    with pytest.raises(
        RunrecordError, match=r"^RUNRECORD_NOW is not an ISO 8601 date or time: 'next tuesday'$"
    ):
        clock.now()


def test_a_job_command_without_now_reads_the_fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from jobs.cli_options import parse_now

    monkeypatch.setenv("RUNRECORD_NOW", "2026-03-29T01:30:00Z")

    assert parse_now(None) == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    assert parse_now("2026-10-25T02:30:00+02:00") == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)


# --- who reads the system clock -----------------------------------------------------------------------------

WALL_CLOCK = {("time", "time"), ("time", "localtime"), ("time", "gmtime"), ("time", "ctime")} | {
    (name, reader) for name in ("datetime", "date") for reader in ("now", "utcnow", "today")
}
# The places that go by the system clock on purpose: runrecord's clock itself, and what APScheduler and the
# lease between hosts measure by it (docs/scheduler.md). No test.
READS_THE_WALL_CLOCK = {
    "adapters/clock.py",
    "adapters/lease.py",
    "jobs/scheduler.py",
}


def _wall_clock_readers(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [
        f"{node.value.id}.{node.attr} (line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and (node.value.id, node.attr) in WALL_CLOCK
    ]
    found += [
        f"from {node.module} import {alias.name} (line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if (node.module, alias.name) in WALL_CLOCK
    ]
    return found


def test_no_module_and_no_test_reads_the_system_clock_but_runrecords_clock() -> None:
    root = Path(__file__).resolve().parents[3]
    readers = {
        str(path.relative_to(root)): found
        for package in ("core", "adapters", "jobs", "dashboard", "data", "tests", "benchmarks")
        for path in sorted((root / package).rglob("*.py"))
        if (found := _wall_clock_readers(path))
    }

    assert {path: found for path, found in readers.items() if path not in READS_THE_WALL_CLOCK} == {}
    assert set(readers) == READS_THE_WALL_CLOCK


@pytest.mark.parametrize(
    "text", ["1969-12-31T23:59:59Z", "9000-01-01", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"]
)
def test_an_instant_before_unix_time_or_near_the_calendars_end_is_one_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.setenv("RUNRECORD_NOW", text)

    with pytest.raises(RunrecordError, match=r"^RUNRECORD_NOW is not from 1970 up to the year 9000: "):
        clock.now()
