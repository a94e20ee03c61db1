"""Benchmark of the dashboard: the Rates page on 1,000,000 runs against the same page on a small installation
(100 conversations, built like the demo but smaller than its 1,200: a stricter baseline), and the Runs table
paging through 1,000,000 runs.

    python -m benchmarks.bench_dashboard                      # builds both under benchmarks/out
    python -m benchmarks.bench_dashboard --large PATH.sqlite   # reuses (or builds) the large one at PATH

Both installations are written by `runrecord generate` (the builder; the large one takes minutes and about
4.5 GB), then the jobs run once on each as the scheduler would: derive-outcomes, measure-rates at both
grains, watch-conversations; the generator's planted release is recorded on both. An installation reused
from an earlier run whose rates an older measure-rates wrote (core.metrics.RATES_VERSION) is measured once
more, as of the same time. Then, in this process:

* Rates: the page rendered in AppTest as it opens (its tiles and the Overview tab), cold (the dashboard's
  caches cleared before each render, so every query runs) and warm (cached), median of --repeats renders
  each; then each other tab opened cold by its link (?tab=), median of --repeats. Every render must draw
  what its tab draws (the tiles and the Overview's charts; the survival chart on Survival), and a job that
  fails while building stops the benchmark (a page of an installation without rates stops at once and would
  pass for fast). Goal: the large installation's cold median within 1.5x the small one's.
* Runs: the first page and the next --pages pages (Older), each a render; every statement on
  tx_nrllm_agentrun is checked to carry a LIMIT or to be a count, so the table never loads all runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event, func, select

from adapters import measure_marks, schema
from adapters.database import make_engine, parse_url
from core.metrics import RATES_VERSION
from core.periods import Grain
from core.time import DAY_S
from data.generate import default_manifest, generate
from jobs import measure, releases, watch
from jobs.derive import derive_outcomes
from jobs.job_log import JobResult, Status, execute
from jobs.schema_setup import init_db, init_installation

REPO_ROOT = Path(__file__).resolve().parent.parent
APP = REPO_ROOT / "dashboard" / "app.py"
OUT = REPO_ROOT / "benchmarks" / "out"
NOW = datetime(2026, 11, 29, tzinfo=UTC)
WINDOW_S = 7 * DAY_S
# The baseline installation: smaller than the demo (jobs.demo.DEMO_CONVERSATIONS), so the ratio is stricter.
DEMO_CONVERSATIONS = 100
# The generator's mix, its SEO campaign included: 219,773 runs from 100,000 conversations (seed 3).
RUNS_PER_CONVERSATION = 2.198
GOAL_RATIO = 1.5
RELEASE_LABEL = "Prompt rule: claim a change only on a write result"
TIMEOUT_S = 300
RUNS_TABLE = re.compile(r"\btx_nrllm_agentrun\b")  # \b: not tx_nrllm_agentrun_event


def build(path: Path, conversations: int, seed: int) -> str:
    """The installation at path, generated and measured once; an existing one is reused (and measured)."""
    url = f"sqlite:///{path}"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        manifest = default_manifest(parse_url(url))
        report = generate(
            url,
            create_tables=init_installation,
            conversations=conversations,
            seed=seed,
            now=NOW,
            manifest=manifest,
            progress=_progress,
        )
        print(f"  generated {report.summary.runs:,} runs in {report.seconds:.0f} s", file=sys.stderr)
    engine = make_engine(url)
    try:
        init_db(engine, with_upstream=False)
        if _count(engine, schema.rate) == 0:
            _measure(engine, url, _release_day(path))
        elif _rates_version(engine) < RATES_VERSION:
            _timed(engine, "measure-rates", lambda: measure.run_job(url, now=NOW))
    finally:
        engine.dispose()
    return url


def _progress(progress: Any) -> None:
    if progress.conversations % 50_000 == 0 or progress.conversations == progress.total:
        print(f"  {progress.conversations:,}/{progress.total:,} conversations", file=sys.stderr)


def _release_day(path: Path) -> date:
    """The release the generator planted (its manifest), else 50 days before NOW, where it plants it."""
    manifest = path.with_suffix(".manifest.json")
    if manifest.exists():
        return date.fromisoformat(json.loads(manifest.read_text(encoding="utf-8"))["release"]["date"])
    return datetime.fromtimestamp(NOW.timestamp() - 50 * DAY_S, UTC).date()


def _measure(engine: Engine, url: str, released_on: date) -> None:
    at = int(NOW.timestamp())
    releases.add_release(engine, released_on, RELEASE_LABEL, now=at)

    def derive() -> JobResult:
        summary = derive_outcomes(engine, now=at, window_s=WINDOW_S)
        return JobResult(summary.runs_derived, 0, f"derived {summary.runs_derived} runs")

    for job, work in (
        ("derive-outcomes", derive),
        ("measure-rates", lambda: measure.run_job(url, now=NOW)),
        ("watch-conversations", lambda: watch.run_job(url, now=NOW)),
    ):
        _timed(engine, job, work)


def _timed(engine: Engine, job: str, work: Callable[[], JobResult]) -> None:
    """Run a job as the scheduler records it, and say how long it took; stop when it failed, since a page of
    a half-measured installation stops early and would be timed as a fast one."""
    started = time.perf_counter()
    execution = execute(engine, job, work)
    print(f"  {job}: {execution.status.value} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if execution.status is not Status.OK:
        raise SystemExit(f"{job} {execution.status.value}: {execution.result.message}")


def _rates_version(engine: Engine) -> int:
    """The oldest RATES_VERSION of the two grains' stored rates (the scheduled job measures both)."""
    with engine.connect() as connection:
        return min(measure_marks.rates_version(connection, grain) for grain in Grain)


def _count(engine: Engine, table: Any) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


def _app(url: str) -> Any:
    from streamlit.testing.v1 import AppTest

    os.environ["RUNRECORD_DB"] = url
    return AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)


def _clear() -> None:
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def rates_renders(url: str, repeats: int) -> dict[str, Any]:
    """Median seconds of a cold and a warm render of the Rates page as it opens, and of a cold render of each
    other tab."""
    from dashboard.components import rates_tab

    cold, warm = [], []
    for _ in range(repeats):
        _clear()
        app = _app(url)
        started = time.perf_counter()
        app.run()
        cold.append(time.perf_counter() - started)
        _check_rates(app, rates_tab.DEFAULT)
        started = time.perf_counter()
        app.run()
        warm.append(time.perf_counter() - started)
        _check_rates(app, rates_tab.DEFAULT)
    tabs: dict[str, float] = {}
    for tab in rates_tab.NAMES[1:]:
        times = []
        for _ in range(repeats):
            _clear()
            app = _app(url)
            app.query_params["tab"] = tab
            started = time.perf_counter()
            app.run()
            times.append(time.perf_counter() - started)
            _check_rates(app, tab)
        tabs[tab] = round(statistics.median(times), 3)
    return {
        "cold_s": round(statistics.median(cold), 3),
        "warm_s": round(statistics.median(warm), 3),
        "tabs_cold_s": tabs,
    }


def runs_paging(url: str, pages: int) -> dict[str, Any]:
    """Seconds of the first Runs page and of each Older page; whether any statement read runs unbounded."""
    statements: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        statements.append(statement)

    _clear()
    event.listen(Engine, "before_cursor_execute", record)
    try:
        app = _app(url)
        app.run()
        started = time.perf_counter()
        app.switch_page("views/runs.py").run()
        times = [time.perf_counter() - started]
        _check(app, "Runs")
        for _ in range(pages):
            older = app.button(key="pager_older")
            if older.disabled:  # the last page
                break
            started = time.perf_counter()
            older.click().run()
            times.append(time.perf_counter() - started)
            _check(app, "Runs")
        where = next(m.value for m in app.markdown if m.value.startswith("Page "))
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    runs = [s for s in statements if RUNS_TABLE.search(s)]
    unbounded = [s for s in runs if "LIMIT" not in s and "count(" not in s.lower()]
    return {"page_s": [round(t, 3) for t in times], "shown": where, "unbounded_statements": len(unbounded)}


def _check(app: Any, title: str) -> None:
    if app.exception or [t.value for t in app.title] != [title]:
        raise SystemExit(f"the {title} page did not render: {[e.value for e in app.exception]}")


def _check_rates(app: Any, tab: str) -> None:
    """The Rates page rendered to its end: its tiles, and what the tab draws (the Overview's EDITED chart,
    the survival chart); a page that stopped early, with no rates measured or no outcome derived, is not a
    fast render."""
    from dashboard.components import summary_tiles, survival_chart
    from dashboard.queries.rates import CHARTED, LABELS

    _check(app, "Rates")
    tiles = [metric.label for metric in app.metric if metric.label in summary_tiles.TITLES.values()]
    if len(tiles) != len(summary_tiles.TITLES):
        raise SystemExit(f"the Rates page drew the tiles {tiles}")
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in app.get("plotly_chart")]
    if tab == "overview" and LABELS[CHARTED[0]] not in titles:
        raise SystemExit(f"the Overview drew {titles}")
    if tab == "survival" and survival_chart.TITLE not in titles:
        raise SystemExit(f"the Survival tab drew {titles}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1_000_000, help="runs in the large installation")
    parser.add_argument("--large", type=Path, default=None, help="the large installation's SQLite file")
    parser.add_argument("--repeats", type=int, default=5, help="renders per measurement (median)")
    parser.add_argument("--pages", type=int, default=5, help="Older pages to page through")
    args = parser.parse_args(argv)

    large_path = args.large or OUT / f"dashboard-{args.runs}.sqlite"
    print("building the demo installation", file=sys.stderr)
    demo = build(OUT / "dashboard-demo.sqlite", DEMO_CONVERSATIONS, 1)
    print(f"building the large installation at {large_path}", file=sys.stderr)
    large = build(large_path, round(args.runs / RUNS_PER_CONVERSATION), 3)

    _rates_warm_up(demo)
    results: dict[str, Any] = {}
    for name, url in (("demo", demo), ("large", large)):
        engine = make_engine(url)
        runs = _count(engine, schema.agentrun)
        engine.dispose()
        results[name] = {
            "runs": runs,
            "rates": rates_renders(url, args.repeats),
            "runs_page": runs_paging(url, args.pages),
        }
    ratio = results["large"]["rates"]["cold_s"] / results["demo"]["rates"]["cold_s"]
    results["rates_cold_ratio"] = round(ratio, 2)
    results["goal"] = f"<= {GOAL_RATIO}"
    results["met"] = ratio <= GOAL_RATIO and results["large"]["runs_page"]["unbounded_statements"] == 0
    print(json.dumps(results, indent=2))
    return 0 if results["met"] else 1


def _rates_warm_up(url: str) -> None:
    """One render first, so that importing Streamlit, plotly and pandas is counted in neither measurement."""
    _clear()
    _app(url).run()


if __name__ == "__main__":
    sys.exit(main())
