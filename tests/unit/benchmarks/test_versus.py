"""bench_derive --against: two checkouts' jobs back to back, each on the installation as it was built."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import func, inspect, select
from sqlalchemy.engine import URL

from adapters import upstream_schema
from adapters.database import make_engine
from adapters.schema import OUR_PREFIX
from benchmarks import bench_derive, versus
from benchmarks.installation import NOW, SHAPES, WINDOW, build, full_plan


def _installation(tmp_path: Path) -> URL:
    url = URL.create("sqlite", database=str(tmp_path / "installation.sqlite"))
    build(url, full_plan(0.0005, SHAPES["default"]))
    return url


def _left(url: URL) -> tuple[list[str], int]:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            ours = [name for name in inspect(connection).get_table_names() if name.startswith(OUR_PREFIX)]
            mirrored = connection.execute(select(func.count()).select_from(upstream_schema.call_outcome))
            return ours, int(mirrored.scalar_one())
    finally:
        engine.dispose()


def test_each_job_derives_the_same_installation_and_leaves_it_as_it_was_built(tmp_path: Path) -> None:
    url = _installation(tmp_path)
    # The other checkout is this one again, under another name.
    mine, other = versus.this_checkout(), replace(versus.this_checkout(), name="itself")
    versus.back_to_back(url, mine, other, rounds=1)
    assert len(mine.runs) == len(other.runs) == 1
    writes = {run["writes"] for run in [*mine.runs, *other.runs]}
    assert len(writes) == 1 and writes.pop() > 0, "every run derived the same writes, from nothing derived"
    assert all(run["seconds"] > 0 and "history" in run["phases"] for run in mine.runs)
    assert _left(url) == ([], 0), "no table of ours and no mirrored row is left behind"
    lines = versus.report_lines(mine, other)
    assert any(line.strip().startswith(f"this ÷ {other.name}") for line in lines)


def test_a_checkout_without_its_installed_command_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench_derive.main(["--against", str(tmp_path), "--scale", "0.0005"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "make .venv/.installed" in error


def _timed(name: str, *seconds: float) -> versus.Checkout:
    runs = [{"seconds": value, "writes": 1, "phases": {"history": value / 2}} for value in seconds]
    return versus.Checkout(name, Path("."), [], runs)


def test_the_report_sets_the_fastest_round_of_each_job_beside_the_other() -> None:
    mine, other = _timed("this", 11.2, 12.3, 11.0), _timed("3762606", 11.8, 10.2, 10.8)

    lines = versus.report_lines(mine, other)

    best = [line.strip() for line in lines if line.strip().startswith("best of")]
    assert best == ["best of 3 rounds: this 11.000 s, 3762606 10.200 s (this is +8% against the other)"]


def test_each_measurement_counts_the_same_installation_from_nothing_measured(tmp_path: Path) -> None:
    url = _installation(tmp_path)
    mine, other = versus.this_checkout(), replace(versus.this_checkout(), name="itself")
    versus.back_to_back(url, mine, other, rounds=1, timed=versus.measuring(NOW, WINDOW))
    conversations = {run["conversations"] for run in [*mine.runs, *other.runs]}
    assert len(conversations) == 1 and conversations.pop() > 0, "each run counted every conversation afresh"
    assert all(run["seconds"] > 0 and "rates" in run["phases"] for run in [*mine.runs, *other.runs])
    assert _left(url) == ([], 0), "no table of ours and no mirrored row is left behind"


def test_a_benchmark_phase_imports_nothing_of_the_tests() -> None:
    """A phase runs in a process that imports its benchmark: its peak memory is the job's, not pytest's."""
    code = (
        "import sys, benchmarks.bench_derive, benchmarks.bench_measure; "
        "print(sorted({name.split('.')[0] for name in sys.modules} & {'pytest', 'hypothesis', 'tests'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=versus.REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
