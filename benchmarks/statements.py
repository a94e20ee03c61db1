"""The statements a job sends, timed one by one: where a run's time goes, statement by statement.

    with timed(engine) as times:
        derive_outcomes(engine, ...)
    print("\n".join(report_lines(times.report(15), "the full run", seconds)))

Each statement is timed from the driver's call to its return (SQLAlchemy's cursor events), so a statement's
time is the database's work and the round trip; compiling it and reading its rows into Python are not in
it (SQLite computes a SELECT's rows as they are fetched: there a SELECT's time is its first row's).
Statements are grouped by their text with the whitespace collapsed. Only the text is kept: the parameters
bound to it are never read. The printed lines cut it to its first HEAD characters (a benchmark's JSON keeps
it whole).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import Engine, event

HEAD = 110  # characters of a statement's text printed
_STARTED = "runrecord_benchmark_started"  # where a connection keeps its running statement's start


@dataclass
class Timed:
    """One statement's text and what its executions took, together."""

    text: str
    seconds: float = 0.0
    executions: int = 0
    rows: int = 0  # as the driver counts them: rows written; for a SELECT some drivers count none


@dataclass
class StatementTimes:
    """Every statement an engine sent while `timed` listened, grouped by its text."""

    by_text: dict[str, Timed] = field(default_factory=dict)

    def add(self, statement: str, seconds: float, rows: int) -> None:
        text = " ".join(statement.split())
        timed = self.by_text.setdefault(text, Timed(text))
        timed.seconds += seconds
        timed.executions += 1
        timed.rows += max(rows, 0)

    def costliest(self, n: int) -> list[dict[str, Any]]:
        """The `n` statements that took the longest in all, the longest first."""
        ranked = sorted(self.by_text.values(), key=lambda timed: (-timed.seconds, timed.text))
        return [asdict(timed) for timed in ranked[:n]]

    def report(self, n: int) -> dict[str, Any]:
        """What report_lines prints: every statement together and the `n` costliest."""
        return {"total": self.total(), "costliest": self.costliest(n)}

    def total(self) -> dict[str, Any]:
        """Every statement together: their time, executions and distinct texts."""
        return {
            "seconds": sum(timed.seconds for timed in self.by_text.values()),
            "executions": sum(timed.executions for timed in self.by_text.values()),
            "statements": len(self.by_text),
        }


@contextmanager
def timed(engine: Engine) -> Iterator[StatementTimes]:
    """Time every statement `engine` sends until the block ends; the listeners are removed afterwards (a
    process kept for a later run sends its statements untimed)."""
    times = StatementTimes()

    def before(connection: Any, _cursor: Any, _statement: str, *_: Any) -> None:
        connection.info[_STARTED] = time.perf_counter()

    def after(connection: Any, cursor: Any, statement: str, *_: Any) -> None:
        started = connection.info.pop(_STARTED, None)
        if started is not None:
            times.add(statement, time.perf_counter() - started, int(getattr(cursor, "rowcount", -1) or 0))

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    try:
        yield times
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)


def report_lines(report: dict[str, Any], what: str, run_s: float) -> list[str]:
    """A `report` (StatementTimes.report) as printed lines: how much of the run (`what`, `run_s` seconds)
    its statements took, then the costliest of them."""
    total, costliest = report["total"], report["costliest"]
    lines = [
        f"the {len(costliest)} costliest statements of {what}: its {total['statements']:,} statements "
        f"({total['executions']:,} executions) took {total['seconds']:.3f} s of its {run_s:.3f} s",
        f"  {'seconds':>9} {'share':>6} {'calls':>5} {'rows':>10}  statement",
    ]
    for timed in costliest:
        text = timed["text"]
        head = text if len(text) <= HEAD else text[: HEAD - 1] + "…"
        share = timed["seconds"] / run_s if run_s else 0.0
        lines.append(
            f"  {timed['seconds']:9.3f} {share:6.1%} {timed['executions']:5,} {timed['rows']:10,}  {head}"
        )
    return lines


def add_statements_option(parser: argparse.ArgumentParser, run: str) -> None:
    """A benchmark's `--statements N`: print the N costliest statements of `run`."""
    parser.add_argument(
        "--statements",
        type=_count,
        default=0,
        metavar="N",
        help=f"time each statement of {run} and print the N costliest (default: 0, none timed)",
    )


def refuse_beside_against(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """`--statements` with `--against` (benchmarks.versus) stops the benchmark before anything is built."""
    if args.statements and args.against is not None:
        parser.error("--statements times this checkout's full run; --against times two checkouts' jobs")


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {n}")
    return n
