"""A point of a rate chart and a cell of a split, selected, link to the Runs page filtered to exactly the
runs behind the figure's n (its denominator: the same period, group and counting as measure-rates); a cell
without a figure (too few to show) links nowhere."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import Any
from urllib.parse import parse_qs

import pandas as pd
import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from adapters import schema
from adapters.database import make_engine
from adapters.runs import COUNTED_METRICS, RunFilter, Tables, count_runs
from core.counting import SCOPE_METRICS
from core.groups import Group, GroupKind
from core.periods import Grain, period_length
from dashboard import url_state
from dashboard.components.group_split import cell_runs
from dashboard.queries import drill_down
from dashboard.queries.rates import CHARTED, LABELS, TOO_FEW
from tests.app import rendered


def _split(app: AppTest) -> pd.DataFrame:
    return next(table for table in rendered.tables(app) if table.index.name == "period start")


def _select(app: AppTest, row: int, column: str) -> AppTest:
    app.session_state["split"] = {"selection": {"rows": [], "columns": [], "cells": [[row, column]]}}
    return app.run()


Link = Callable[[str, Group, date, date], RunFilter]


def _stored_and_linked(url: str, metrics: Sequence[str], link: Link) -> tuple[list[Any], list[int]]:
    """Every stored rate row of the metrics, and how many runs the filter `link` makes of each opens."""
    r = schema.rate.c
    columns = (r.metric, r.grain, r.period_start, r.group_kind, r.group_value, r.numerator, r.denominator)
    engine = make_engine(url)
    with engine.connect() as connection:
        stored = list(connection.execute(select(*columns).where(r.metric.in_(metrics))).all())
        found = [
            count_runs(
                connection,
                link(
                    row.metric,
                    Group(GroupKind(row.group_kind), row.group_value),
                    row.period_start,
                    row.period_start + period_length(Grain(row.grain)) - timedelta(days=1),
                ),
                tables=Tables(outcomes=True, facts=True),
            )
            for row in stored
        ]
    engine.dispose()
    return stored, found


def test_every_stored_figures_n_is_exactly_the_runs_its_drill_down_counts(measured_db_url: str) -> None:
    stored, found = _stored_and_linked(measured_db_url, COUNTED_METRICS, drill_down.counted_runs)

    assert {row.metric for row in stored} == set(COUNTED_METRICS)
    assert {(row.grain, row.group_kind) for row in stored} >= {("week", "configuration"), ("day", "skill")}
    assert found == [row.denominator for row in stored]


def test_every_stored_edit_scope_figures_numerator_is_exactly_the_runs_an_alerts_link_opens(
    measured_db_url: str,
) -> None:
    scopes = [metric.value for metric in SCOPE_METRICS.values()]

    stored, found = _stored_and_linked(measured_db_url, scopes, drill_down.runs_of)

    assert {row.metric for row in stored} == set(scopes)
    assert sum(row.numerator for row in stored) > 0
    assert found == [row.numerator for row in stored]


def _line_points(app: AppTest, metric: str) -> list[dict[str, Any]]:
    """The points of a chart's lines with a figure, as a selection reports them."""
    figure = next(f for f in rendered.figures(app) if f["layout"]["title"]["text"] == LABELS[metric])
    points = []
    for curve, trace in enumerate(figure["data"]):
        if trace.get("mode") != "lines+markers":
            continue
        for index, data in enumerate(trace["customdata"]):
            if data[1] is not None and data[1] == data[1]:
                points.append({"curve_number": curve, "point_index": index, "customdata": data})
    return points


def _select_point(app: AppTest, key: str, point: dict[str, Any]) -> AppTest:
    selection = {"points": [point], "point_indices": [point["point_index"]], "box": [], "lasso": []}
    app.session_state[key] = {"selection": selection}
    return app.run()


def _follow_runs_link(app: AppTest) -> tuple[str, dict[str, Any]]:
    """The drill-down link's text, and the Runs page opened with its parameters: (label, its filter)."""
    links = [link for link in app.get("page_link") if link.proto.label.startswith("Open the ")]
    assert len(links) == 1
    link = links[0].proto
    query = {name: values[0] for name, values in parse_qs(link.query_string).items()}
    for name in list(app.query_params):
        del app.query_params[name]
    app.query_params.update(query)
    app.switch_page("views/runs.py").run()
    return link.label, json.loads(query["runs"])


@pytest.mark.parametrize("metric", CHARTED)
def test_a_chart_point_opens_exactly_the_runs_its_n_counts(
    dashboard: Callable[..., AppTest], measured_db_url: str, metric: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"range": "all"})
    point = max(_line_points(app, metric), key=lambda p: (p["customdata"][1], p["customdata"][6]))
    n = int(point["customdata"][1])

    _select_point(app, f"chart_{metric}", point)
    label, chosen = _follow_runs_link(app)

    assert not app.exception
    assert label.startswith(f"Open the {n:,} run") and LABELS[metric] in label
    assert [title.value for title in app.title] == ["Runs"]
    assert chosen["counted"] == metric and chosen["ended_from"] == point["customdata"][6][:10]
    assert any(f"· {n:,} run" in text.value for text in app.markdown)


def test_a_point_of_one_skills_line_opens_the_runs_of_that_skill_it_counts(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"range": "all", "group": "skill"})
    point = max(_line_points(app, "edited_rate"), key=lambda p: p["customdata"][1])
    n, skill = int(point["customdata"][1]), point["customdata"][7]

    _select_point(app, "chart_edited_rate", point)
    label, chosen = _follow_runs_link(app)

    assert not app.exception
    assert f"skill {skill or '(no skill)'}" in label
    assert chosen["skill"] == (skill or "(no skill)") and chosen["counted"] == "edited_rate"
    assert any(f"· {n:,} run" in text.value for text in app.markdown)
    assert any("Runs counted in the denominator of" in text.value for text in app.info)


def test_a_split_cell_opens_the_runs_of_its_period_group_and_denominator(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"tab": "configurations", "group": "skill"})
    app.selectbox(key="split_metric").set_value("edited_rate").run()
    split = _split(app)
    row, column = next(
        (index, name)
        for index, (_, cells) in enumerate(split.iterrows())
        for name, cell in cells.items()
        if re.match(r"\d+\.\d% \([1-9]", str(cell))
    )
    denominator = int(re.match(r"[\d.]+% \([\d,]+/([\d,]+)", split.iloc[row][column])[1])  # type: ignore[index]

    _select(app, row, column)
    label, chosen = _follow_runs_link(app)

    assert not app.exception
    assert label.startswith(f"Open the {denominator:,} run")
    assert [title.value for title in app.title] == ["Runs"]
    assert chosen["counted"] == "edited_rate" and chosen["ended_from"] == split.index[row]
    assert chosen["skill"] == column
    assert any(f"· {denominator:,} run" in text.value for text in app.markdown)


def test_a_cell_too_few_to_show_opens_no_runs(measured_db_url: str) -> None:
    frame = pd.DataFrame(
        [
            {
                "period_start": pd.Timestamp("2026-11-09").date(),
                "group": "small-assistant",
                "group_value": "small-assistant",
                "runs": None,
                "numerator": None,
                "denominator": None,
                "rate": None,
                "low": None,
                "high": None,
                "shown": False,
            }
        ]
    )

    found = cell_runs(frame, "edited_rate", "week", "configuration", "2026-11-09", "small-assistant")

    assert found is None and TOO_FEW == "too few to show"


def test_a_runs_link_counts_by_a_rate_a_run_filter_can_count_and_no_other() -> None:
    first, last = date(2026, 11, 9), date(2026, 11, 15)

    chosen = drill_down.counted_runs("denial_rate", Group(GroupKind.SKILL, ""), first, last)
    per_message = drill_down.counted_runs("go_on_second_run", Group(GroupKind.ALL), first, last)

    assert url_state.parse_runs_filter(url_state.runs_filter_json(chosen)) == chosen
    assert chosen.counted == "denial_rate" and chosen.skill == ""
    assert per_message.counted is None and (per_message.ended_from, per_message.ended_to) == (first, last)
    with pytest.raises(ValueError, match="counted must be one of"):
        url_state.parse_runs_filter('{"counted": "go_on_second_run"}')


def test_dropping_the_links_filter_clears_its_banner_in_the_same_run_and_keeps_the_other_filters(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    linked = {
        "counted": "edited_rate",
        "ended_from": "2026-11-02",
        "ended_to": "2026-11-08",
        "configuration": "seo-assistant",
    }
    app = dashboard(measured_db_url, page="runs", query={"runs": json.dumps(linked)})
    asked = "as the link from Rates asked"
    assert any(asked in str(info.value) for info in app.info)

    app.button(key="filters_ended").click().run()

    assert not app.exception
    assert not any(asked in str(info.value) for info in app.info)
    assert not [button for button in app.button if button.key == "filters_ended"]
    kept = app.query_params["runs"]
    assert json.loads(kept if isinstance(kept, str) else kept[0]) == {"configuration": "seo-assistant"}


def test_an_edit_scope_link_says_the_scope_in_words_and_dropping_it_drops_the_scope_too(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    linked = {"scope": "same_fields", "ended_from": "2026-11-02", "ended_to": "2026-11-08"}
    app = dashboard(measured_db_url, page="runs", query={"runs": json.dumps(linked)})

    said = [str(info.value) for info in app.info if "as the link from Rates asked" in str(info.value)]
    assert said == [
        "EDITED runs of edit scope same fields (the AI's own fields), ending 2026-11-02 – 2026-11-08 (the "
        "period a rate counts them in), as the link from Rates asked."
    ]

    app.button(key="filters_ended").click().run()

    assert not app.exception
    assert "runs" not in app.query_params  # nothing left to keep
