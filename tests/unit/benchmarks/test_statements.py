"""The benchmarks' statement timer (benchmarks.statements): every execution counted once under its text,
nothing timed after the run, no bound value kept, the costliest first."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, text

from benchmarks.bench_derive import main as bench_derive
from benchmarks.statements import HEAD, StatementTimes, report_lines, timed

EDITOR = "editor-4711"  # a value bound to a statement: never kept


@pytest.fixture
def engine() -> Iterator[Engine]:
    made = create_engine("sqlite://")
    with made.begin() as connection:
        connection.execute(text("CREATE TABLE t (uid INTEGER PRIMARY KEY, name TEXT)"))
    yield made
    made.dispose()


def test_each_execution_is_counted_once_under_its_text_whatever_its_whitespace(engine: Engine) -> None:
    with timed(engine) as times, engine.begin() as connection:
        connection.execute(text("INSERT INTO t (name) VALUES (:name)"), {"name": "a"})
        connection.execute(text("INSERT INTO t (name)\n    VALUES (:name)"), {"name": "b"})
        connection.execute(text("UPDATE t SET name = :name"), {"name": "c"})

    by_text = {timed["text"]: timed for timed in times.costliest(10)}

    assert by_text["INSERT INTO t (name) VALUES (?)"]["executions"] == 2
    assert by_text["INSERT INTO t (name) VALUES (?)"]["rows"] == 2
    assert by_text["UPDATE t SET name = ?"]["rows"] == 2
    assert times.total()["executions"] == 3 and times.total()["statements"] == 2


def test_nothing_is_timed_after_the_run(engine: Engine) -> None:
    with timed(engine) as times, engine.begin() as connection:
        connection.execute(text("INSERT INTO t (name) VALUES ('a')"))
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO t (name) VALUES ('b')"))

    assert times.total()["executions"] == 1


def test_no_value_bound_to_a_statement_is_kept_or_printed(engine: Engine) -> None:
    with timed(engine) as times, engine.begin() as connection:
        connection.execute(text("INSERT INTO t (name) VALUES (:name)"), {"name": EDITOR})
        connection.execute(text("SELECT uid FROM t WHERE name = :name"), {"name": EDITOR}).all()

    report = times.report(10)

    assert EDITOR not in repr(report)
    assert EDITOR not in "\n".join(report_lines(report, "the run", 1.0))


def test_the_costliest_come_first_cut_to_n_each_text_to_its_head() -> None:
    times = StatementTimes()
    times.add("SELECT 1", 0.1, -1)
    times.add("SELECT " + "x, " * 100 + "2", 0.3, 5)
    times.add("SELECT 3", 0.2, 0)

    report = times.report(2)
    lines = report_lines(report, "the full run", 1.0)

    assert [timed["seconds"] for timed in report["costliest"]] == [0.3, 0.2]
    assert lines[0] == (
        "the 2 costliest statements of the full run: its 3 statements (3 executions) took 0.600 s of its "
        "1.000 s"
    )
    assert lines[2].split()[:4] == ["0.300", "30.0%", "1", "5"]
    assert lines[2].endswith("…") and len(lines[2].split("  ")[-1]) == HEAD
    assert lines[3].endswith("SELECT 3")


def test_statements_cannot_be_timed_beside_another_checkout(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        bench_derive(["--statements", "5", "--against", "."])

    assert stopped.value.code == 2
    assert "--statements times this checkout's full run" in capsys.readouterr().err


def test_a_negative_number_of_statements_is_refused_before_anything_is_built(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        bench_derive(["--statements", "-1"])

    assert stopped.value.code == 2
    assert "argument --statements: must be 0 or more, not -1" in capsys.readouterr().err
