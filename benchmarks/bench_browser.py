"""How fast the dashboard shows what a reader came for, in headless Chromium: time to the element, measured in
the page (from the navigation's start, or from the click), never to the server's reply.

    python -m benchmarks.bench_browser [--repeats 5] [--db benchmarks/out/browser-demo.sqlite]

The installation is the demo as `runrecord demo` builds it (jobs.demo: the same generator, seed and size,
its planted release marked, every job run once), at a fixed clock (NOW) so that two runs see the same
rates; a file from an earlier run is reused. `runrecord dashboard` serves it on a free port with the
password sign-in, and Debian's Chromium (/usr/bin/chromium, driven by Playwright; never a downloaded browser)
opens, in a new tab for every repeat:

* Rates (`/rates`): until the summary row's five tiles are drawn, and until the first chart (EDITED) has
  drawn its line;
* a selector change on that page: the Outcomes tab clicked until the outcome mix chart is drawn, and the
  filter bar's grain switched to day until the EDITED chart is redrawn with the days' points;
* a Run deep link (`/run?run=<uuid>`, a run with an EDITED write) until its writes are listed;
* a Conversation deep link (`/conversation?conversation=1`) as the administrator (signed in once with the
  password the dashboard printed, as the browser tests do) until its transcript's run record is shown.

Each figure is the median of --repeats, after one load of each that is not counted (the server's first
session imports the pages and fills its caches; it is printed as "first"). Each is set against its goal and
against a baseline measured in the same browser in the same run: a new tab loading the server's health
endpoint (`/_stcore/health`, a plain text page) until its text shows. Streamlit's own start in the browser
(its app shell, before any of the page's elements) is printed too, since every figure contains it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from adapters import schema, settings
from adapters.database import make_engine, parse_url
from dashboard.access import TOKEN_COOKIE
from jobs.demo import absolute, ensure_demo_database, prepare_demo
from tests.browser.server import NotServingError, Server, dashboard_server

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT = REPO_ROOT / "benchmarks" / "out"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
NOW = datetime(2026, 11, 25, 14, tzinfo=UTC)  # the tests' clock: the demo's rates as the tests see them
VIEWPORT: ViewportSize = {"width": 1400, "height": 1000}
TIMEOUT_MS = 60_000

# Goals, in seconds.
GOALS = {
    "summary row": 2.0,
    "first chart": 3.0,
    "selector change: tab": 0.5,
    "selector change: grain": 0.5,
    "Run deep link": 1.5,
    "Conversation deep link": 1.5,
}

# Conditions evaluated in the page on every animation frame; each returns the page's clock when it holds.
TILES = """() => document.querySelectorAll('[class*="st-key-tile_"]').length >= 5
    && Array.from(document.querySelectorAll('[class*="st-key-tile_"]'))
        .every(t => t.innerText.includes('95% CI')) ? performance.now() : false"""
FIRST_CHART = """() => document.querySelector('.st-key-chart_edited_rate .scatterlayer .trace .points path')
    ? performance.now() : false"""
OUTCOME_MIX = """() => document.querySelector(
    '.st-key-mix .scatterlayer .trace, .st-key-mix .barlayer .trace')
    ? performance.now() - window.__clicked : false"""
DAY_POINTS = """(before) => document.querySelectorAll(
    '.st-key-chart_edited_rate .scatterlayer .trace .points path').length > before
    ? performance.now() - window.__clicked : false"""
RUN_WRITES = """() => document.body.innerText.includes('Writes and their observed outcomes')
    ? performance.now() : false"""
CONVERSATION = """() => document.body.innerText.includes('Run record: stored and rebuilt from events')
    ? performance.now() : false"""
HEALTH = """() => document.body && document.body.innerText.trim() === 'ok' ? performance.now() : false"""
APP_SHELL = """() => document.querySelector('[data-testid="stApp"]') ? performance.now() : false"""
SETTLED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && document.querySelectorAll('[data-testid="stSkeleton"]').length === 0"""


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def build_demo(path: Path) -> str:
    """The demo installation at `path` as `runrecord demo` builds it, at NOW; reused when it is there."""
    url = absolute(parse_url(f"sqlite:///{path}"))
    if path.exists():
        _say(f"reusing {path}")
        return url.render_as_string(hide_password=False)
    started = time.perf_counter()
    ensure_demo_database(url, now=NOW)
    prepare_demo(url, say=lambda line: _say(f"  {line}"))
    _say(f"built the demo in {time.perf_counter() - started:.0f} s")
    return url.render_as_string(hide_password=False)


def edited_run(url: str) -> str:
    """A run with an EDITED write: its page has writes, history and outcomes to draw."""
    engine = make_engine(url)
    run, written = schema.agentrun.c, schema.write_outcome.c
    try:
        with engine.connect() as connection:
            return str(
                connection.execute(
                    select(run.uuid)
                    .join_from(schema.agentrun, schema.write_outcome, written.run_uid == run.uid)
                    .where(written.outcome == "edited")
                    .order_by(run.uid)
                    .limit(1)
                ).scalar_one()
            )
    finally:
        engine.dispose()


def _until(page: Any, condition: str, argument: Any = None) -> float:
    """Seconds the page's clock read when `condition` first held (checked on every animation frame)."""
    handle = page.wait_for_function(condition, arg=argument, polling="raf", timeout=TIMEOUT_MS)
    return float(handle.json_value()) / 1000


def _settle(page: Any) -> None:
    page.wait_for_function(SETTLED, timeout=TIMEOUT_MS)
    page.wait_for_timeout(300)
    page.wait_for_function(SETTLED, timeout=TIMEOUT_MS)


def _click(page: Any, selector: str, label: str) -> None:
    """Click the button `label` inside `selector` from the page's own script, noting the page's clock."""
    page.evaluate(
        """([selector, label]) => {
            const button = Array.from(document.querySelectorAll(selector + ' button'))
                .find(b => b.innerText.trim() === label);
            window.__clicked = performance.now();
            button.click();
        }""",
        [selector, label],
    )


def _in_new_tab(context: Any, measure: Callable[[Any], dict[str, float]]) -> dict[str, float]:
    page = context.new_page()
    try:
        return measure(page)
    finally:
        page.close()


def rates(base: str) -> Callable[[Any], dict[str, float]]:
    def measure(page: Any) -> dict[str, float]:
        page.goto(f"{base}/rates", wait_until="commit")
        shell = _until(page, APP_SHELL)
        tiles = _until(page, TILES)
        chart = _until(page, FIRST_CHART)
        _settle(page)
        _click(page, ".st-key-tab", "Outcomes")
        tab = _until(page, OUTCOME_MIX)
        _settle(page)
        _click(page, ".st-key-tab", "Overview")
        _settle(page)
        _until(page, FIRST_CHART)
        weeks = page.locator(".st-key-chart_edited_rate .scatterlayer .trace .points path").count()
        _click(page, ".st-key-filters_grain", "day")
        grain = _until(page, DAY_POINTS, weeks)
        _settle(page)
        return {
            "Streamlit's app shell": shell,
            "summary row": tiles,
            "first chart": chart,
            "selector change: tab": tab,
            "selector change: grain": grain,
        }

    return measure


def deep_link(base: str, path: str, condition: str, name: str) -> Callable[[Any], dict[str, float]]:
    def measure(page: Any) -> dict[str, float]:
        page.goto(base + path, wait_until="commit")
        found = _until(page, condition)
        _settle(page)
        return {name: found}

    return measure


def baseline(base: str) -> Callable[[Any], dict[str, float]]:
    def measure(page: Any) -> dict[str, float]:
        page.goto(f"{base}/_stcore/health", wait_until="commit")
        return {"baseline: health endpoint": _until(page, HEALTH)}

    return measure


def sign_in(context: Any, base: str, password: str) -> None:
    """The administrator's sign-in in this browser context (its cookie serves every later tab)."""
    page = context.new_page()
    page.goto(f"{base}/sign-in")
    page.get_by_label("Administrator password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Signed in as administrator", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    _settle(page)
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not any(cookie["name"] == TOKEN_COOKIE for cookie in context.cookies()):
        if time.monotonic() > deadline:
            raise SystemExit("the sign-in left no cookie")
        page.wait_for_timeout(100)
    page.close()


@contextmanager
def _served(url: str, work: Path) -> Iterator[Server]:
    """The dashboard on the installation, its clock at NOW; one line and an exit where it cannot serve."""
    try:
        with dashboard_server(url, work, NOW) as server:
            yield server
    except NotServingError as error:
        raise SystemExit(str(error)) from None


def run(url: str, repeats: int) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Every figure's times over the repeats, and each one's first (uncounted) time."""
    from playwright.sync_api import sync_playwright

    uuid = edited_run(url)
    times: dict[str, list[float]] = {}
    first: dict[str, float] = {}
    with (
        tempfile.TemporaryDirectory() as work,
        _served(url, Path(work)) as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=VIEWPORT)
        conversation = "/conversation?conversation=1"
        measures = [
            baseline(server.base),
            rates(server.base),
            deep_link(server.base, f"/run?run={uuid}", RUN_WRITES, "Run deep link"),
            deep_link(server.base, conversation, CONVERSATION, "Conversation deep link"),
        ]
        for measure in measures[:3]:
            first |= _in_new_tab(context, measure)
        sign_in(context, server.base, server.password)
        first |= _in_new_tab(context, measures[3])
        for repeat in range(repeats):
            for measure in measures:
                for name, seconds in _in_new_tab(context, measure).items():
                    times.setdefault(name, []).append(seconds)
            _say(f"  repeat {repeat + 1} of {repeats}")
        browser.close()
    return times, first


def report(times: dict[str, list[float]], first: dict[str, float], repeats: int) -> list[str]:
    """One line per figure: its median, its goal and whether it is met, and its ratio to the baseline."""
    base = statistics.median(times["baseline: health endpoint"])
    lines = [f"median of {repeats} (first load, not counted, in brackets); baseline = health endpoint"]
    for name, values in times.items():
        median = round(statistics.median(values), 3)  # judged as printed
        goal = GOALS.get(name)
        verdict = "" if goal is None else f"  goal ≤{goal:.1f} s: {'met' if median <= goal else 'MISSED'}"
        lines.append(
            f"{name:<26} {median:6.3f} s  ({first.get(name, float('nan')):6.3f} s)  "
            f"{median / base:7.1f}× baseline{verdict}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=5, help="times each figure is measured (median)")
    parser.add_argument(
        "--db", type=Path, default=OUT / "browser-demo.sqlite", help="the demo file (built when missing)"
    )
    arguments = parser.parse_args(argv)
    if not CHROMIUM.exists():
        raise SystemExit(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    os.environ[settings.variable("now")] = NOW.isoformat()
    arguments.db.parent.mkdir(parents=True, exist_ok=True)
    url = build_demo(arguments.db.resolve())
    times, first = run(url, arguments.repeats)
    for line in report(times, first, arguments.repeats):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
