"""Every page of `runrecord dashboard` in headless Chromium: the key texts are there, no Streamlit exception
box is shown, and each page is saved as a screenshot for the README (docs/screenshots/)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from sqlalchemy import func, select

from adapters import schema
from adapters.database import make_engine
from tests.app.installations import planted_runs
from tests.browser.conftest import Served, updating_screenshots

VIEWPORT = {"width": 1400, "height": 1000}
# The tallest screenshot: the Rates page's Overview with its tiles and six charts is about 4,000 pixels;
# Chromium draws up to 16,384.
MAX_SHOT_HEIGHT = 10_000
SETTLE_TIMEOUT_MS = 60_000
POLL_MS = 125
STABLE_POLLS = 4  # half a second without a change in the page's text
# Streamlit draws a page in steps: it is settled when the script stopped running, no element is a skeleton
# any more and every plotly chart has drawn its SVG.
SETTLED = """() => !document.querySelector('[data-testid="stStatusWidget"]')
    && document.querySelectorAll('[data-testid="stSkeleton"]').length === 0
    && Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'))
        .every(c => c.querySelector('.main-svg'))"""


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    yield opened
    context.close()


def _settle(page: Any, until: str | None = None) -> None:
    """Wait for the script run to end: the text `until` is shown (when given), nothing is loading any more,
    and the page's text has stopped changing."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=SETTLE_TIMEOUT_MS)
    if until is not None:
        page.get_by_text(until, exact=False).first.wait_for(timeout=SETTLE_TIMEOUT_MS)
    stable, last = 0, ""
    for _ in range(SETTLE_TIMEOUT_MS // POLL_MS):
        page.wait_for_function(SETTLED, timeout=SETTLE_TIMEOUT_MS)
        text = page.inner_text("body")
        stable = stable + 1 if text == last else 0
        if stable >= STABLE_POLLS:
            return
        last = text
        page.wait_for_timeout(POLL_MS)


def _shoot(page: Any, path: Path) -> None:
    """The whole page, when this run saves the screenshots: the window is made as tall as the app's content
    first (Streamlit scrolls inside)."""
    if not updating_screenshots():
        return
    height = page.evaluate(
        '() => Math.max(...Array.from(document.querySelectorAll(\'[data-testid="stMain"], section.main, '
        '[data-testid="stAppViewContainer"]\')).map(e => e.scrollHeight), 800)'
    )
    page.set_viewport_size({"width": VIEWPORT["width"], "height": min(int(height) + 40, MAX_SHOT_HEIGHT)})
    page.wait_for_timeout(800)
    page.screenshot(path=str(path))
    page.set_viewport_size(VIEWPORT)


def _no_exception(page: Any) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.inner_text("body")


def _open(page: Any, url: str, until: str | None = None) -> str:
    page.goto(url)
    _settle(page, until)
    _no_exception(page)
    return str(page.inner_text("body"))


def _inside_their_window(served: Served) -> int:
    """What measure-rates stored of the runs inside their window: week grain, all runs."""
    engine = make_engine(served.database)
    r = schema.rate.c
    query = select(func.coalesce(func.sum(r.numerator), 0)).where(
        r.metric == "window_open", r.grain == "week", r.group_kind == "all"
    )
    with engine.connect() as connection:
        stored = int(connection.execute(query).scalar_one())
    engine.dispose()
    return stored


def _edited_run(served: Served) -> str:
    engine = make_engine(served.database)
    run, written = schema.agentrun.c, schema.write_outcome.c
    with engine.connect() as connection:
        uuid = connection.execute(
            select(run.uuid)
            .join_from(schema.agentrun, schema.write_outcome, written.run_uid == run.uid)
            .where(written.outcome == "edited", written.edit_scope == "same_fields")
            .limit(1)
        ).scalar_one()
    engine.dispose()
    return str(uuid)


# Each tab of the Rates page and a text only that tab shows.
RATES_TABS = (
    ("Overview", "Recomputed nothingSaved agrees with the chat's notice"),
    ("Release", "Weeks on each side"),
    ("Configurations", "Configuration against configuration"),
    ("Outcomes", "Observed outcome mix"),
    ("Survival", "Survival of AI text"),
    ("Alerts", "Runs of alert #"),
)
TILES = '[class*="st-key-tile_"]'


def _tab(page: Any, label: str, until: str) -> str:
    """Click a tab of the Rates page; the page's text once it shows `until`."""
    page.locator(".st-key-tab button").filter(has_text=re.compile(f"^{label}$")).click()
    _settle(page, until)
    _no_exception(page)
    return str(page.inner_text("body"))


def test_the_rates_page_opens_first_with_its_tiles_the_planted_release_canary_and_alerts(
    page: Any, served: Served, screenshots: Path
) -> None:
    body = _open(page, served.base + "/", until="Rates as CSV")

    for text in (
        "Rates",
        "Time range",
        "Grain",
        "Group",
        "Release marker",
        "EDITED",
        "denials of earlier work",
    ):
        assert text in body
    assert page.locator(TILES).count() == 5
    assert re.search(r"\d+ open alerts: a rate moved significantly", body)
    marker = f"text=release {served.release.isoformat()}"
    assert page.locator(marker).count() >= 6  # a marker on each of the Overview's six charts
    _shoot(page, screenshots / "rates.png")

    body = _tab(page, "Configurations", "Configuration against configuration")
    # The demo's canary against its stable configuration, told apart (docs/configurations.md).
    assert "seo-assistant-canary against seo-assistant over 4 closed weeks" in body
    assert "significantly higher" in body and "too few to show" in body
    body = _tab(page, "Survival", "median time to the first change")
    assert "the curves differ significantly" in body  # the canary's curve beside the stable one's
    body = _tab(page, "Outcomes", "Observed outcome mix")
    assert "window not closed yet" in body and "Shares of the EDITED runs of the range" in body
    waiting = re.search(r"(\d+) runs window not closed yet as of the last measurement", body)
    assert waiting is not None and int(waiting[1]) == _inside_their_window(served)  # the stored count


def test_clicking_each_tab_shows_its_content_only_and_keeps_it_in_the_url(page: Any, served: Served) -> None:
    _open(page, served.base + "/rates", until="Rates as CSV")

    for label, shown in RATES_TABS:
        body = _tab(page, label, shown)

        assert [other for other, text in RATES_TABS if text in body] == [label]
        assert page.locator(TILES).count() == 5  # the summary row stays on top of every tab
        if label == "Overview":
            assert "tab=" not in page.url
        else:
            assert f"tab={label.lower()}" in page.url


def test_a_link_with_a_tab_opens_that_tab(page: Any, served: Served) -> None:
    body = _open(page, served.base + "/rates?tab=survival&range=12w", until="median time to the first change")

    assert "Observed outcome mix" not in body and "Survival of AI text" in body


def test_no_rates_tile_cuts_its_text(page: Any, served: Served) -> None:
    _open(page, served.base + "/rates", until="Rates as CSV")
    tiles = page.locator(TILES)

    texts = tiles.evaluate_all("tiles => tiles.map(tile => tile.innerText)")
    cut = tiles.evaluate_all(CUT_IN_TILE)

    assert len(texts) == 5 and cut == []
    assert tiles.evaluate_all("tiles => tiles.filter(t => t.scrollWidth > t.clientWidth + 1).length") == 0
    assert not any("…" in text for text in texts)
    for text in texts:
        assert "95% CI" in text and "Across the release of" in text


def test_the_runs_page_pages_through_the_runs(page: Any, served: Served, screenshots: Path) -> None:
    body = _open(page, served.base + "/runs", until="Page 1 of")

    pages = re.search(r"Page 1 of (\d+) · ([\d,]+) runs", body)
    assert "Runs" in body and pages is not None
    assert int(pages[1]) == -(-int(pages[2].replace(",", "")) // 50) > 1  # 50 runs a page
    page.get_by_role("button", name="Older →").click()
    _settle(page, until=f"Page 2 of {pages[1]}")
    assert f"Page 2 of {pages[1]}" in page.inner_text("body")
    page.get_by_role("button", name="← Newer").click()
    _settle(page, until=f"Page 1 of {pages[1]}")
    _no_exception(page)
    _shoot(page, screenshots / "runs.png")


def test_a_run_page_shows_segments_and_the_history_that_decided_its_writes(
    page: Any, served: Served, screenshots: Path
) -> None:
    uuid = _edited_run(served)

    body = _open(page, f"{served.base}/run?run={uuid}", until="Writes and their observed outcomes")

    assert f"Run {uuid[:8]}" in body
    for text in ("Segments", "Run record entry", "Writes and their observed outcomes", "— edited"):
        assert text in body
    page.get_by_text("— edited", exact=False).last.click()  # the write's history rows (tables draw on canvas)
    _settle(page)
    assert "only the names of the changed fields are read" in page.inner_text("body")
    _shoot(page, screenshots / "run.png")


def test_an_administrator_signs_in_and_opens_conversation_1_and_health(
    page: Any, served: Served, screenshots: Path
) -> None:
    body = _open(page, served.base + "/sign-in", until="Administrator password")
    assert "Administrator password" in body and served.password
    _shoot(page, screenshots / "sign-in.png")

    page.get_by_label("Administrator password").fill(served.password)
    page.get_by_role("button", name="Sign in").click()
    _settle(page)
    page.get_by_role("link", name="Conversations").click()
    _settle(page, until="Newest conversations")
    page.get_by_label("Conversation uid").fill("1")
    page.keyboard.press("Enter")
    _settle(page, until="Run record: stored and rebuilt from events")
    _no_exception(page)
    body = page.inner_text("body")
    assert "Starte den SEO-Check für diese Seite." in body and "Übernehmen — übernommen" in body
    assert "approved" not in body  # one language: the reader's (German by default)
    assert "The stored record and the one rebuilt from events agree (8 entries)." in body
    _shoot(page, screenshots / "conversation.png")

    page.get_by_role("tab", name="What the model is given next turn").click()
    _settle(page)
    body = page.inner_text("body")
    assert "6 written records" in body and "[Chat record — written by the chat from the run" in body
    _shoot(page, screenshots / "conversation-notes.png")

    page.get_by_role("link", name="Health").click()
    _settle(page, until="Pending derivations")
    _no_exception(page)
    body = page.inner_text("body")
    for text in ("Jobs", "Stuck conversations", "History horizon against the window", "Pending derivations"):
        assert text in body
    # Each job run's message is read whole: in the grid of st.dataframe it was cut at the column's width.
    messages = _job_run_messages(served)
    job_runs = page.locator('[data-testid="stTable"]').filter(has_text=messages[0])
    assert job_runs.count() == 1
    shown = job_runs.inner_text()
    assert len(messages) == 3 and all(message in shown for message in messages)
    assert job_runs.evaluate_all(CUT_IN_TILE) == []
    _shoot(page, screenshots / "health.png")


def _job_run_messages(served: Served) -> list[str]:
    engine = make_engine(served.database)
    with engine.connect() as connection:
        messages = [str(m) for m in connection.execute(select(schema.job_run.c.message)).scalars() if m]
    engine.dispose()
    return messages


def test_the_product_team_gets_the_sign_in_in_place_of_an_administrator_page(
    page: Any, served: Served
) -> None:
    body = _open(page, served.base + "/health", until="Administrator password")

    assert "Page not found" not in body and "Pending derivations" not in body
    assert "The Health page is for administrators" in body
    assert page.get_by_role("link", name="Health").count() == 0


def _signed_in_page(page: Any, served: Served, until: str) -> str:
    page.get_by_label("Administrator password").fill(served.password)
    page.get_by_role("button", name="Sign in").click()
    _settle(page, until=until)
    _no_exception(page)
    return str(page.inner_text("body"))


def test_a_link_to_conversation_1_signs_in_on_that_page_and_the_sign_in_survives_a_reload_and_a_new_tab(
    page: Any, served: Served
) -> None:
    body = _open(page, served.base + "/conversation?conversation=1", until="Administrator password")
    assert "Page not found" not in body and "Starte den SEO-Check" not in body
    assert "The Conversation page is for administrators" in body

    body = _signed_in_page(page, served, "Run record: stored and rebuilt")
    assert "Starte den SEO-Check für diese Seite." in body and page.url.endswith(
        "/conversation?conversation=1"
    )

    page.reload()
    _settle(page, until="Run record: stored and rebuilt")
    assert "Starte den SEO-Check für diese Seite." in page.inner_text("body")
    cookie = next(c for c in page.context.cookies() if c["name"] == "runrecord_admin")
    assert cookie["sameSite"] == "Strict" and served.password not in cookie["value"]

    other = page.context.new_page()
    body = _open(other, served.base + "/health", until="Pending derivations")
    assert "Administrator password" not in body

    other.get_by_role("button", name="Sign out").click()
    _settle(other, until="Administrator password")
    page.reload()
    _settle(page, until="Administrator password")
    assert "Starte den SEO-Check" not in page.inner_text("body")


def _run_asking_for_a_tool_not_offered(served: Served) -> str:
    engine = make_engine(served.database)
    run, event = schema.agentrun.c, schema.agentrun_event.c
    with engine.connect() as connection:
        uuid = connection.execute(
            select(run.uuid)
            .join_from(schema.agentrun, schema.agentrun_event, event.run == run.uid)
            .where(event.kind == "llm", event.payload.contains("translate_page"))
            .limit(1)
        ).scalar_one()
    engine.dispose()
    return str(uuid)


def test_an_administrator_sees_what_each_model_round_of_a_run_was_offered(
    page: Any, served: Served, screenshots: Path
) -> None:
    uuid = _run_asking_for_a_tool_not_offered(served)
    _open(page, f"{served.base}/run?run={uuid}", until="Segments")
    assert "Model rounds" not in page.inner_text("body")  # the product team's view
    _open(page, served.base + "/sign-in", until="Administrator password")
    _signed_in_page(page, served, "You are signed in as an administrator")

    body = _open(page, f"{served.base}/run?run={uuid}", until="Model rounds: offered, asked for, ran")

    assert "The model asked for tools its round did not offer: translate_page" in body
    _shoot(page, screenshots / "run-rounds.png")


PAGES = ("/", "/runs", "/sign-in", "/conversation?conversation=1", "/health")


def test_no_page_shows_a_deploy_control_and_each_has_the_products_title_and_icon(
    page: Any, served: Served
) -> None:
    for path in PAGES:
        _open(page, served.base + path)

        assert page.locator('[data-testid="stAppDeployButton"]').count() == 0, path
        assert page.get_by_role("button", name="Deploy").count() == 0, path
        # The browser sets the title when the script's page configuration arrives, which may follow the text.
        page.wait_for_function("document.title.endsWith(' · runrecord')", timeout=SETTLE_TIMEOUT_MS)
        assert page.title().endswith(" · runrecord"), path
        icons = page.locator("link[rel*=icon]").evaluate_all("links => links.map(link => link.href)")
        assert icons and not any(icon.endswith("/favicon.png") for icon in icons), path


def _planted(served: Served, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first run the demo generator planted so (its manifest)."""
    return next(run for run in planted_runs(served.demo) if wanted(run))


def _answer_marked(page: Any, answer: str, mark: str) -> bool:
    """Whether the chat bubble of the answer holds runrecord's mark: the reading stands in place."""
    bubbles = page.locator('[data-testid="stChatMessage"]').filter(has_text=answer).filter(has_text=mark)
    return bool(bubbles.count() > 0)


def test_the_conversation_page_marks_an_unwritten_claim_without_a_stored_notice_and_a_notice_disagreement(
    page: Any, served: Served, screenshots: Path
) -> None:
    unwritten = _planted(served, lambda run: run["claims_unwritten"] and run["answer"]["notice"] is None)
    disagreeing = _planted(served, lambda run: run["notice_disagrees"])
    _open(page, served.base + "/sign-in", until="Administrator password")
    _signed_in_page(page, served, "You are signed in as an administrator")

    claim = _open(
        page, f"{served.base}/conversation?conversation={unwritten['conversation']}", until=READING_MARK
    )
    claimed = _assistant_text(served, unwritten["run"])
    notice = _open(
        page, f"{served.base}/conversation?conversation={disagreeing['conversation']}", until=READING_MARK
    )
    flagged = _assistant_text(served, disagreeing["run"])

    assert "Claims a change its run did not write. The chat stored no nothingSaved notice for it." in claim
    assert "The chat's nothingSaved notice disagrees with the recomputation" in notice
    assert _answer_marked(page, flagged, "disagrees with the recomputation")
    page.goto(f"{served.base}/conversation?conversation={unwritten['conversation']}")
    _settle(page, until=READING_MARK)
    assert _answer_marked(page, claimed, "Claims a change its run did not write")
    _shoot(page, screenshots / "conversation-claim.png")


READING_MARK = "runrecord's reading:"


def _assistant_text(served: Served, run_uuid: str) -> str:
    """The answer the run gave, as stored (the message whose payload names the run)."""
    engine = make_engine(served.database)
    m = schema.message.c
    with engine.connect() as connection:
        payloads = connection.execute(select(m.payload).where(m.payload.contains(run_uuid))).scalars().all()
    engine.dispose()
    answers = [json.loads(p) for p in payloads]
    return str(next(a["content"] for a in reversed(answers) if a.get("role") == "assistant"))


# A tile's text fits when no element in it is wider inside than its box (a cut value scrolls or ends in "…").
CUT_IN_TILE = """tiles => tiles.flatMap(tile => Array.from(tile.querySelectorAll('*'))
    .filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
    .map(e => tile.innerText))"""


# The widths the date picker's shown parts are cut to (its native inputs are hidden in a box 1 px wide).
CUT_IN_DATES = """pickers => pickers.flatMap(picker => Array.from(picker.querySelectorAll('*'))
    .filter(e => e.clientWidth > 1 && e.scrollWidth > e.clientWidth)
    .filter(e => getComputedStyle(e).overflowX !== 'visible')
    .map(e => [e.scrollWidth, e.clientWidth]))"""


def test_the_runs_pages_dates_are_read_whole_empty_or_with_a_range(page: Any, served: Served) -> None:
    dates = page.locator('[data-testid="stDateInput"]')
    _open(page, served.base + "/runs", until="Page 1 of")
    empty = dates.evaluate_all(CUT_IN_DATES)

    chosen = json.dumps({"from": "2026-11-01", "to": "2026-11-25"})
    _open(page, f"{served.base}/runs?runs={chosen}", until="Page 1 of")

    assert empty == []
    assert dates.evaluate_all(CUT_IN_DATES) == []
    assert re.sub(r"\s", "", dates.inner_text()).endswith("2026-11-01–2026-11-25")


def test_no_run_page_tile_cuts_its_text(page: Any, served: Served) -> None:
    accepted = _planted(
        served,
        lambda run: run["outcome"] == "accepted_unchanged" and run["configuration"] == "content-assistant",
    )
    open_window = _planted(served, lambda run: run["writes"] and not run["due"])

    for run, outcome in ((accepted, "accepted unchanged"), (open_window, "window closes on")):
        _open(page, f"{served.base}/run?run={run['run']}", until="Writes and their observed outcomes")
        tiles = page.locator('[class*="st-key-header_tile_"]')

        texts = tiles.evaluate_all("tiles => tiles.map(tile => tile.innerText)")
        assert tiles.evaluate_all(CUT_IN_TILE) == [], run["run"]
        assert len(texts) == 4 and not any("…" in text for text in texts)
        assert any(run["configuration"] in text for text in texts)
        assert any(outcome in text for text in texts)


# --- paths, order and drill-down ----------------------------------------------------------------------------

# Each page's own path, and what shows that it opened there (the administrator pages, signed out: the
# sign-in in their place, which names them).
PATHS = (
    ("/rates", "denials of earlier work"),
    ("/runs", "Page 1 of"),
    ("/run", "Open a run from the Runs table"),
    ("/conversation", "The Conversation page is for administrators"),
    ("/health", "The Health page is for administrators"),
    ("/sign-in", "Administrator password"),
)
# The accessible table Streamlit's data grid keeps beside its canvas: the rows on screen, cell by cell.
GRID_ROWS = """() => Array.from(document.querySelector('table[role=grid]').rows).slice(1)
    .map(row => Array.from(row.cells).map(cell => cell.innerText))"""


@pytest.mark.parametrize(("path", "shown"), PATHS, ids=[path for path, _ in PATHS])
def test_every_pages_path_opens_that_page(page: Any, served: Served, path: str, shown: str) -> None:
    body = _open(page, served.base + path, until=shown)

    assert "Page not found" not in body and "You have requested page" not in body


def test_the_runs_are_listed_newest_start_first(page: Any, served: Served) -> None:
    engine = make_engine(served.database)
    with engine.connect() as connection:
        newest = connection.execute(select(func.max(schema.agentrun.c.started_at))).scalar_one()
    engine.dispose()

    _open(page, served.base + "/runs", until="Page 1 of")
    started = [row[1] for row in page.evaluate(GRID_ROWS)]

    assert len(started) > 5
    assert started == sorted(started, reverse=True)
    assert started[0] == datetime.fromtimestamp(int(newest), UTC).strftime("%Y-%m-%d %H:%M")


def _edited_alert(served: Served) -> tuple[int, int, set[str]]:
    """The open EDITED alert for all runs: its id, its after side's numerator, and the uuids of the runs
    behind it (ending in its after side's days, with outcome edited)."""
    engine = make_engine(served.database)
    a, run, fact, outcome = schema.alert.c, schema.agentrun.c, schema.measure_fact.c, schema.run_outcome.c
    with engine.connect() as connection:
        alert = connection.execute(
            select(a.uid, a.after_numerator, a.after_from, a.after_to).where(
                a.metric == "edited_rate", a.group_kind == "all", a.status == "open"
            )
        ).one()
        start = int(datetime.combine(alert.after_from, datetime.min.time(), UTC).timestamp())
        end = int(datetime.combine(alert.after_to, datetime.min.time(), UTC).timestamp()) + 86_400
        uuids = connection.execute(
            select(run.uuid)
            .join_from(schema.agentrun, schema.measure_fact, fact.run_uid == run.uid)
            .join(schema.run_outcome, outcome.run_uid == run.uid)
            .where(fact.ended_at >= start, fact.ended_at < end, outcome.outcome == "edited")
        ).scalars()
        found = set(uuids)
    engine.dispose()
    return int(alert.uid), int(alert.after_numerator), found


def test_an_alerts_link_opens_the_runs_page_with_exactly_the_alerts_runs(page: Any, served: Served) -> None:
    uid, numerator, behind = _edited_alert(served)
    _open(page, served.base + "/rates?tab=alerts", until="Rates as CSV")

    page.get_by_role("link", name=f"Runs of alert #{uid}:", exact=False).click()
    _settle(page, until="Page 1 of")

    body = page.inner_text("body")
    assert "/runs?runs=" in page.url
    assert f"· {numerator:,} runs" in body and len(behind) == numerator
    rows = page.evaluate(GRID_ROWS)
    assert rows and {row[-1] for row in rows} == {"edited"}
    assert {row[0].rsplit("=", 1)[-1] for row in rows} <= behind

    # Back, and another alert's link in the same session: its own runs, not the first link's.
    other, counted = _another_alert(served, uid, numerator)
    page.go_back()
    _settle(page, until="Rates as CSV")
    page.get_by_role("link", name=f"Runs of alert #{other}:", exact=False).click()
    _settle(page, until="Page 1 of")
    assert re.search(rf"· {counted:,} runs?\b", page.inner_text("body")), page.url


def _another_alert(served: Served, uid: int, numerator: int) -> tuple[int, int]:
    """An open alert but `uid` whose after side counts another number of runs: its id and that number."""
    engine = make_engine(served.database)
    a = schema.alert.c
    with engine.connect() as connection:
        found = connection.execute(
            select(a.uid, a.after_numerator)
            .where(a.status == "open", a.uid != uid, a.after_numerator != numerator, a.after_numerator > 0)
            .order_by(a.uid)
            .limit(1)
        ).one()
    engine.dispose()
    return int(found.uid), int(found.after_numerator)


def _stored_denominator(served: Served, metric: str, grain: str, period: str) -> int:
    engine = make_engine(served.database)
    r = schema.rate.c
    with engine.connect() as connection:
        found = connection.execute(
            select(r.denominator).where(
                r.metric == metric,
                r.grain == grain,
                r.period_start == datetime.fromisoformat(period).date(),
                r.group_kind == "all",
            )
        ).scalar_one()
    engine.dispose()
    return int(found)


def _click_centre(page: Any, element: Any) -> None:
    """A mouse click at the element's centre (Streamlit's header would take a click Playwright aims at an
    element under it; the mouse goes where the point is drawn)."""
    element.scroll_into_view_if_needed()
    box = element.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


POINT_LINK = re.compile(r"Open the ([\d,]+) runs? counted in EDITED, week of (\d{4}-\d\d-\d\d)")


def test_a_chart_point_links_to_exactly_the_runs_its_n_counts_and_back_keeps_the_rates_filters(
    page: Any, served: Served
) -> None:
    rates = served.base + "/rates?range=12w&grain=week"
    _open(page, rates, until="Rates as CSV")
    points = page.locator(".st-key-chart_edited_rate .scatterlayer .trace .points path")

    _click_centre(page, points.nth(points.count() - 2))
    link = page.get_by_role("link", name=POINT_LINK)
    link.wait_for(timeout=SETTLE_TIMEOUT_MS)
    label = POINT_LINK.search(link.inner_text())
    assert label is not None
    n, period = int(label[1].replace(",", "")), label[2]
    link.click()
    _settle(page, until="Page 1 of")

    body = page.inner_text("body")
    assert "/runs?runs=" in page.url and "Runs counted in the denominator of EDITED" in body
    assert f"· {n:,} run" in body and n == _stored_denominator(served, "edited_rate", "week", period)
    page.go_back()
    _settle(page, until="Rates as CSV")
    assert page.url == rates
    _no_exception(page)


def _runs_list(page: Any) -> tuple[str, list[list[str]]]:
    """Where the Runs table is ("Page n of N · M runs") and its rows on screen."""
    found = re.search(r"Page \d+ of \d+ · [\d,]+ runs?", page.inner_text("body"))
    assert found is not None
    return found[0], page.evaluate(GRID_ROWS)


def _page_two_of_completed_runs(page: Any, served: Served) -> tuple[str, list[list[str]]]:
    _open(page, served.base + '/runs?runs={"status":"completed"}', until="Page 1 of")
    page.get_by_role("button", name="Older →").click()
    _settle(page, until="Page 2 of")
    return _runs_list(page)


def test_browser_back_from_a_run_returns_to_the_filtered_runs_list(page: Any, served: Served) -> None:
    where, rows = _page_two_of_completed_runs(page, served)
    listed = page.url
    grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()

    page.mouse.click(grid["x"] + 15, grid["y"] + 52)  # the first row's selection box
    _settle(page, until="Back to the runs")
    assert f"/run?run={rows[0][0].rsplit('=', 1)[-1]}" in page.url
    page.go_back()
    _settle(page, until="Page 2 of")

    assert _runs_list(page) == (where, rows)
    assert unquote(page.url) == unquote(listed)  # the filter and nothing else (no ?run= left over)
    _no_exception(page)


def test_a_runs_link_opens_its_run_in_a_new_tab_and_leaves_the_list_as_it_was(
    page: Any, served: Served
) -> None:
    where, rows = _page_two_of_completed_runs(page, served)
    grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()

    page.mouse.click(grid["x"] + 65, grid["y"] + 52)  # the data grid focuses the cell first
    with page.context.expect_page() as opened:
        page.mouse.click(grid["x"] + 65, grid["y"] + 52)  # then follows the link: the first row's short uuid
    run = opened.value
    _settle(run, until="Back to the runs")

    assert f"/run?run={rows[0][0].rsplit('=', 1)[-1]}" in run.url
    assert _runs_list(page) == (where, rows)


def test_browser_back_from_a_conversation_chosen_in_the_list_returns_to_the_list(
    page: Any, served: Served
) -> None:
    _open(page, served.base + "/conversations", until="Administrator password")
    _signed_in_page(page, served, "Newest conversations")
    listed = page.url
    grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()

    page.mouse.click(grid["x"] + 15, grid["y"] + 52)  # the first row's selection box
    _settle(page, until="Run record: stored and rebuilt")
    assert "/conversation?conversation=" in page.url
    chosen = page.url
    page.go_back()
    _settle(page, until="Newest conversations")

    assert page.url == listed
    assert "Run record: stored and rebuilt" not in page.inner_text("body")
    page.go_forward()  # and the conversation again, as it was
    _settle(page, until="Run record: stored and rebuilt")
    assert page.url == chosen
    _no_exception(page)
