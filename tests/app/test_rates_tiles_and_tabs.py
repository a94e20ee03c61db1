"""The Rates page's summary row, its tabs and its one filter bar: each tile's last closed week with n and
interval, coloured by whether the move is good for its metric; the tab the URL names, and only its queries;
the range every chart spans; the URL's bad values falling back; a day without data a gap, never a line."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pandas as pd
import pytest
from sqlalchemy import select
from streamlit.proto.Metric_pb2 import Metric as MetricProto
from streamlit.testing.v1 import AppTest

from adapters import schema
from adapters.database import make_engine
from core.groups import parse_group
from core.metrics import Metric
from core.periods import Grain
from core.summary import TILE_METRICS
from core.time_range import RANGE_NAMES, TimeRange, periods_in, time_range
from core.two_sided import TOO_FEW_TO_SHOW
from dashboard import url_state
from dashboard.components import rate_chart, rates_tab, summary_tiles, survival_chart
from dashboard.queries.rates import CHARTED
from jobs import releases
from tests.app import rendered
from tests.app.conftest import NOW
from tests.app.installations import released
from tests.conftest import REPO_ROOT

TODAY = NOW.date()
LAST_CLOSED = date(2026, 11, 9)  # the measured demo's weeks are open from 2026-11-16 (NOW: 2026-11-25)
RED, GREEN, GRAY = MetricProto.MetricColor.RED, MetricProto.MetricColor.GREEN, MetricProto.MetricColor.GRAY


def _stored(url: str, metric: Metric, period: date, group: tuple[str, str] = ("all", "")) -> tuple[int, int]:
    r = schema.rate.c
    query = select(r.numerator, r.denominator).where(
        r.metric == metric.value,
        r.grain == "week",
        r.period_start == period,
        r.group_kind == group[0],
        r.group_value == group[1],
    )
    engine = make_engine(url)
    with engine.connect() as connection:
        row = connection.execute(query).one()
    engine.dispose()
    return int(row.numerator), int(row.denominator)


def _tiles(app: AppTest) -> dict[str, Any]:
    titles = set(summary_tiles.TITLES.values())
    return {metric.label: metric for metric in app.metric if metric.label in titles}


def _texts(app: AppTest) -> list[str]:
    return [str(element.value) for kind in (app.markdown, app.caption) for element in kind]


def _calendar_charts(app: AppTest) -> list[dict[str, Any]]:
    return [
        chart for chart in rendered.figures(app) if chart["layout"]["title"]["text"] != survival_chart.TITLE
    ]


# --- the tiles ----------------------------------------------------------------------------------------------


def test_a_tile_for_each_headline_rate_shows_its_last_closed_week_with_n_and_interval(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url)

    assert not app.exception
    tiles = _tiles(app)
    assert list(tiles) == [summary_tiles.TITLES[metric] for metric in TILE_METRICS]
    for metric in TILE_METRICS:
        numerator, denominator = _stored(measured_db_url, metric, LAST_CLOSED)
        tile = tiles[summary_tiles.TITLES[metric]]
        assert tile.value == f"{numerator / denominator:.1%}"
        assert any(
            text.startswith(f"week of {LAST_CLOSED.isoformat()}: {numerator} of {denominator}, 95% CI ")
            for text in _texts(app)
        ), metric


def test_a_tile_is_red_for_a_significant_move_for_the_worse_and_grey_for_no_significant_move(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url)

    tiles = _tiles(app)
    edited = tiles[summary_tiles.TITLES[Metric.EDITED_RATE]]
    assert edited.proto.color == RED and edited.proto.delta.startswith("+")  # EDITED rose: lower is better
    assert any(":red[rose significantly: worse]" in text for text in _texts(app))
    stored = tiles[summary_tiles.TITLES[Metric.NOTHING_SAVED_RATE]]
    assert stored.proto.color == GRAY  # 0 of 64 against 1 of 64: too few to tell
    assert any(":gray[too few to tell]" in text for text in _texts(app))


# A Monday six weeks back: the four weeks from it have closed, and it is a release of the last eight weeks.
FALLEN_ON = date(2026, 10, 12)


@pytest.fixture(scope="module")
def fallen(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, date]:
    """Every answer carries the nothingSaved notice in the four weeks before a release and none in the four
    after it (50 runs a week): a fall the test tells apart from chance."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fallen') / 'fallen.sqlite'}"
    released(
        url,
        NOW,
        FALLEN_ON,
        "Prompt rule: claim a change only on a write result",
        notice_after=False,
        per_week=50,
    )
    return url, FALLEN_ON


def test_a_fall_of_a_rate_where_lower_is_better_across_the_release_is_green(
    dashboard: Callable[..., AppTest], fallen: tuple[str, date]
) -> None:
    url, released_on = fallen

    app = dashboard(url)

    across = [text for text in _texts(app) if text.startswith(f"Across the release of {released_on}")]
    assert len(across) == len(TILE_METRICS)
    stored = across[TILE_METRICS.index(Metric.NOTHING_SAVED_RATE)]
    assert re.search(r":green\[[\d.]+% → [\d.]+%, −[\d.]+ pts: fell significantly: better\]", stored), stored


@pytest.mark.parametrize("group", ["configuration:seo-assistant", "skill:missing_alt_text"])
def test_the_release_tab_compares_the_chosen_group_as_compare_with_group_does(
    dashboard: Callable[..., AppTest], measured: tuple[str, date], group: str
) -> None:
    url, released_on = measured
    chosen = parse_group(group)
    assert chosen is not None
    engine = make_engine(url)
    report = releases.compare_at(
        engine,
        Metric.EDITED_RATE,
        released_on,
        weeks=4,
        group=chosen,
        grain=Grain.WEEK,
        now=int(NOW.timestamp()),
    )
    engine.dispose()

    app = dashboard(url, page="rates", query={"tab": "release", "group": group})

    assert not app.exception
    texts = _texts(app)
    for side in (report.before, report.after):
        proportion = side.proportion
        expected = f"{proportion.numerator:,} of {proportion.denominator:,}" if side.shown else "too few"
        assert any(expected in text for text in texts), (group, expected)
    assert any(text.startswith("The comparison is of ") and group.split(":")[1] in text for text in texts)


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"range": "custom", "from": "2025-01-01", "to": "2025-02-01"}, "(no period with a figure)."),
        (
            {"group": "skill:missing_alt_text"},
            "(too few runs of the group, or of the runs beside it, in each period).",
        ),
    ],
    ids=["a range before every measured period", "a group too small in every period"],
)
def test_a_chart_without_a_figure_says_why_not_that_nothing_was_measured(
    dashboard: Callable[..., AppTest], measured_db_url: str, query: dict[str, str], said: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query=query)

    assert not app.exception
    infos = [str(info.value) for info in app.info]
    assert any(said in info for info in infos), "\n".join(infos)
    assert all(": nothing to show in this range (" in info for info in infos), "\n".join(infos)
    assert not any("measure-rates" in info for info in infos)


@pytest.mark.parametrize("kind", ["configuration", "skill"])
def test_a_groups_line_has_one_colour_on_every_chart(
    dashboard: Callable[..., AppTest], measured_db_url: str, kind: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"group": kind})

    assert not app.exception
    colours: dict[str, set[str]] = {}
    for chart in _calendar_charts(app):
        for trace in chart["data"]:
            if trace.get("mode") == "lines+markers":
                colours.setdefault(trace["name"], set()).add(trace["line"]["color"])
    assert len(colours) > 1
    assert all(len(each) == 1 for each in colours.values()), colours
    assert len({next(iter(each)) for each in colours.values()}) == len(colours)


def test_a_group_keeps_its_colour_whatever_order_a_charts_rows_come_in() -> None:
    span = TimeRange(date(2026, 11, 2), date(2026, 11, 15))
    rows = [
        {
            "period_start": date(2026, 11, 2),
            "group": group,
            "group_value": group,
            "numerator": 1,
            "denominator": 10,
            "low": 0.0,
            "high": 0.4,
            "excluded": 0,
            "rate": 0.1,
            "open": False,
        }
        for group in ("seo-assistant", "content-assistant", "seo-assistant-canary")
    ]
    frames = [pd.DataFrame(rows), pd.DataFrame(rows[::-1]), pd.DataFrame(rows[1:])]
    no_release = pd.DataFrame(columns=["released_on", "label"])
    colours = rate_chart.group_colours(row["group"] for row in rows)

    drawn = [
        {
            trace.name: trace.line.color
            for trace in rate_chart.figure(frame, no_release, "EDITED", span, "week", colours).data
            if trace.mode == "lines+markers"
        }
        for frame in frames
    ]

    assert drawn[0] == drawn[1] == {**drawn[2], "seo-assistant": drawn[0]["seo-assistant"]}
    assert len(set(drawn[0].values())) == 3


def test_a_tile_of_a_group_with_fewer_than_five_runs_in_its_week_reads_too_few_to_show(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    runs, _ = _stored(measured_db_url, Metric.RUNS, LAST_CLOSED, ("skill", "missing_alt_text"))
    assert 0 < runs < 5

    app = dashboard(measured_db_url, page="rates", query={"group": "skill:missing_alt_text"})

    assert not app.exception
    tiles = _tiles(app)
    assert {tile.value for tile in tiles.values()} == {summary_tiles.NO_FIGURE}
    shown = [text for text in _texts(app) if text.startswith(f"week of {LAST_CLOSED.isoformat()}")]
    assert shown == [f"week of {LAST_CLOSED.isoformat()}: {TOO_FEW_TO_SHOW}"] * len(TILE_METRICS)
    assert not any(f"{runs} of" in text for text in shown)


# --- the tabs -----------------------------------------------------------------------------------------------

# What each tab shows, and nothing else does.
TAB_CONTENT = {
    "overview": "Recomputed nothingSaved agrees with the chat",
    "release": "Weeks on each side",
    "configurations": "Configuration against configuration",
    "outcomes": "Observed outcome mix",
    "survival": "Survival of AI text",
    "alerts": "Runs of alert #",
}


@pytest.mark.parametrize("tab", rates_tab.NAMES)
def test_the_tab_the_url_names_is_the_one_shown_and_the_only_one(
    dashboard: Callable[..., AppTest], measured_db_url: str, tab: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"tab": tab})

    assert not app.exception
    assert app.segmented_control(key="tab").value == tab
    text = rendered.text(app)
    assert [name for name, content in TAB_CONTENT.items() if content in text] == [tab]


def test_only_the_chosen_tabs_queries_run(
    dashboard: Callable[..., AppTest], measured_db_url: str, statements: list[str]
) -> None:
    dashboard(measured_db_url, page="rates", query={"tab": "overview"})
    overview = list(statements)
    statements.clear()

    dashboard(measured_db_url, page="rates", query={"tab": "survival"})

    assert not any("tx_runrecord_survival_tally" in s for s in overview)
    assert any("tx_runrecord_survival_tally" in s for s in statements)
    assert not any("denial_rate" in str(s) and "GROUP BY" in s for s in statements)


def test_choosing_a_tab_puts_it_in_the_url_and_the_overview_takes_it_out(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url)

    app.segmented_control(key="tab").set_value("outcomes").run()

    assert app.query_params["tab"] == "outcomes"
    assert "Observed outcome mix" in rendered.text(app)
    app.segmented_control(key="tab").set_value("overview").run()
    assert "tab" not in app.query_params


# --- the filter bar -----------------------------------------------------------------------------------------


def _xs(chart: dict[str, Any]) -> list[str]:
    return [x for trace in chart["data"] for x in rendered.values(trace.get("x", []))]


@pytest.mark.parametrize(
    ("query", "span"),
    [
        ({}, time_range("26w", today=TODAY, earliest=None)),
        ({"range": "4w"}, time_range("4w", today=TODAY, earliest=None)),
        (
            {"range": "custom", "from": "2026-09-20", "to": "2026-10-20"},
            TimeRange(date(2026, 9, 20), date(2026, 10, 20)),
        ),
    ],
    ids=["the default 26 weeks", "the last 4 weeks", "chosen days"],
)
@pytest.mark.parametrize("tab", ["overview", "outcomes"])
def test_the_range_bounds_every_chart_and_each_spans_all_of_it(
    dashboard: Callable[..., AppTest], measured_db_url: str, query: dict[str, str], span: TimeRange, tab: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"tab": tab, **query})

    charts = _calendar_charts(app)
    assert not app.exception and charts
    first, last = span.start(Grain.WEEK).isoformat(), span.last.isoformat()
    for chart in charts:
        assert chart["layout"]["xaxis"]["range"] == rate_chart.x_range(span, "week")
        assert all(first <= x[:10] <= last for x in _xs(chart))


def test_the_release_line_stands_on_every_chart_at_the_same_date_and_none_hides_it(
    dashboard: Callable[..., AppTest], measured: tuple[str, date]
) -> None:
    url, released_on = measured

    charts = _calendar_charts(dashboard(url)) + _calendar_charts(
        dashboard(url, page="rates", query={"tab": "outcomes"})
    )
    hidden = _calendar_charts(dashboard(url, page="rates", query={"marker": "none"}))

    assert len(charts) == len(CHARTED) + 2  # the overview's rates, the outcome mix and the edit scopes
    for chart in charts:
        assert [shape["x0"] for shape in chart["layout"]["shapes"]] == [released_on.isoformat()]
    assert hidden and all(not chart["layout"].get("shapes") for chart in hidden)


BAD = {
    "tab": "editors",
    "range": "1000w",
    "from": "2026-13-40",
    "to": "yesterday",
    "grain": "month",
    "group": "editor:90001",
    "marker": "1999-01-01",
}


def test_values_the_url_cannot_hold_fall_back_to_the_defaults_without_a_word(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    plain = dashboard(measured_db_url)

    app = dashboard(measured_db_url, page="rates", query=BAD)

    assert not app.exception
    assert app.segmented_control(key="tab").value == "overview"
    assert app.segmented_control(key="filters_range").value == "26w"
    assert app.segmented_control(key="filters_grain").value == "week"
    assert app.selectbox(key="filters_group").value == "all"
    assert app.selectbox(key="filters_marker").value == plain.selectbox(key="filters_marker").value
    assert rendered.figures(app) == rendered.figures(plain)
    said = [str(element.value) for element in (*app.warning, *app.error, *app.info)]
    assert said == [str(element.value) for element in (*plain.warning, *plain.error, *plain.info)]


def test_a_custom_range_whose_from_is_after_its_to_is_the_default_range(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(
        measured_db_url, page="rates", query={"range": "custom", "from": "2026-11-01", "to": "2026-10-01"}
    )

    assert not app.exception
    default = time_range("26w", today=TODAY, earliest=None)
    assert all(
        chart["layout"]["xaxis"]["range"] == rate_chart.x_range(default, "week")
        for chart in _calendar_charts(app)
    )


def test_a_custom_range_reaching_past_the_measured_periods_draws_only_theirs(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(
        measured_db_url,
        page="rates",
        query={"range": "custom", "from": "1970-01-01", "to": "8999-12-31", "grain": "day"},
    )

    assert not app.exception
    measured = _calendar_charts(
        dashboard(measured_db_url, page="rates", query={"range": "all", "grain": "day"})
    )
    assert [chart["layout"]["xaxis"]["range"] for chart in _calendar_charts(app)] == [
        chart["layout"]["xaxis"]["range"] for chart in measured
    ]


def test_a_chosen_grain_and_range_are_kept_in_the_url(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url)

    app.segmented_control(key="filters_grain").set_value("day").run()
    app.segmented_control(key="filters_range").set_value("12w").run()

    assert (app.query_params["grain"], app.query_params["range"]) == ("day", "12w")


def test_a_day_without_data_breaks_the_line_and_the_band(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"grain": "day", "range": "12w"})

    edited = _calendar_charts(app)[0]
    line = next(trace for trace in edited["data"] if trace.get("mode") == "lines+markers")
    days, rates = [date.fromisoformat(x) for x in rendered.values(line["x"])], rendered.values(line["y"])
    span = time_range("12w", today=TODAY, earliest=None)
    assert days == list(periods_in(span, Grain.DAY))  # every day of the range, with or without data
    empty = [day for day, rate in zip(days, rates, strict=True) if rate is None]
    assert empty and line["connectgaps"] is False
    bands = [trace for trace in edited["data"] if trace.get("fill") == "tonexty"]
    assert len(bands) > 1  # one area per run of days with data
    for band in bands:
        covered = [date.fromisoformat(x) for x in rendered.values(band["x"])]
        assert all(b - a == timedelta(days=1) for a, b in zip(covered, covered[1:], strict=False))
        assert not set(covered) & set(empty)


def test_split_by_configuration_each_line_is_blank_where_its_week_is_too_few_to_show(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"group": "configuration", "range": "all"})

    assert not app.exception
    edited = _calendar_charts(app)[0]
    lines = {trace["name"]: trace for trace in edited["data"] if trace.get("mode") == "lines+markers"}
    assert set(lines) == {"content-assistant", "seo-assistant", "seo-assistant-canary"}
    canary = lines["seo-assistant-canary"]
    points = dict(zip(rendered.values(canary["x"]), rendered.values(canary["y"]), strict=True))
    runs, _ = _stored(
        measured_db_url, Metric.RUNS, date(2026, 11, 2), ("configuration", "seo-assistant-canary")
    )
    assert 0 < runs < 5 and points["2026-11-02"] is None


def test_the_docs_list_every_url_parameter_of_the_rates_page_and_every_tab_and_range() -> None:
    page = (REPO_ROOT / "docs" / "dashboard.md").read_text(encoding="utf-8")
    section = page[page.index("## The Rates page") :]
    section = section[: section.index("**Conversation: why an answer says what it says.**")]

    table = [line for line in section.splitlines() if line.startswith("| `")]

    params = (url_state.TAB, url_state.RANGE, url_state.FROM, url_state.TO, url_state.GRAIN)
    for name in (*params, url_state.GROUP, url_state.MARKER):
        assert any(f"`{name}`" in row.split("|")[1] for row in table), name
    for value in (*rates_tab.NAMES, *RANGE_NAMES):
        assert f"`{value}`" in section, value


def test_a_tiles_arrow_points_the_way_its_rate_moved(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url)

    for tile in _tiles(app).values():
        delta = tile.proto.delta
        expected = "UP" if delta.startswith("+") else "DOWN" if delta.startswith("−") else "NONE"
        assert MetricProto.MetricDirection.Name(tile.proto.direction) == expected, delta
