"""The Rates page: rates with their intervals and denominators, release markers on every chart, before/after,
the outcome mix with UNKNOWN and open windows, the edit-scope split, groups too few to show, the CSV."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path

from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from adapters import schema
from adapters.database import make_engine, parse_url, sqlite_path
from adapters.rates import RateRow
from core.formatting import NO_SKILL, plural
from core.metrics import RATES, Metric
from dashboard.components import notice_agreement, outcome_mix, rates_tab
from dashboard.queries import rates
from tests.app import rendered
from tests.app.conftest import NOW
from tests.app.installations import WINDOW_S
from tests.older_marks import left_by_an_older_runrecord

# The tables of the runs themselves: the Rates page reads none of them, only what the jobs aggregated.
RUN_TABLES = re.compile(
    r"\b(tx_nrllm_agentrun|tx_nrllm_agentrun_event|tx_nrmcpagent_message|tx_nrmcpagent_conversation"
    r"|tx_runrecord_measure_fact|tx_runrecord_write_outcome|sys_history)\b"
)


# The survival of AI text is read from the counts derive-outcomes keeps (adapters.survival); the write
# outcomes are asked only whether there is one. A statement that counts, groups or asks for distinct values
# hands over aggregates, not rows.
OUTCOME_AGGREGATE = re.compile(r"\b(count\(|GROUP BY|SELECT DISTINCT)")
ANY_DERIVED = re.compile(r"^SELECT tx_runrecord_write_outcome\.uid\s+FROM tx_runrecord_write_outcome\s+LIMIT")


def _texts(elements: object) -> list[str]:
    return [element.value for element in elements]  # type: ignore[attr-defined]


def test_every_chart_carries_the_planted_release_marker(
    dashboard: Callable[..., AppTest], measured: tuple[str, date]
) -> None:
    url, released_on = measured

    overview, outcomes = (
        dashboard(url, page="rates", query={"tab": tab}) for tab in ("overview", "outcomes")
    )

    assert not overview.exception and not outcomes.exception
    # Every chart over the calendar: the overview's rates (EDITED, nothingSaved stored and recomputed, their
    # agreement, denials, "go on"), the outcome mix and the edit scopes (the survival chart runs over the time
    # since each write, not the calendar)
    charts = rendered.figures(overview) + rendered.figures(outcomes)
    assert len(charts) == len(rates.CHARTED) + 2
    for chart in charts:
        lines = [shape for shape in chart["layout"]["shapes"] if shape["x0"] == released_on.isoformat()]
        labels = [note["text"] for note in chart["layout"]["annotations"]]
        assert lines and any(released_on.isoformat() in label for label in labels)


def test_a_rate_is_drawn_with_its_wilson_band_and_its_denominator_on_hover(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url)

    edited = rendered.figures(app)[0]
    high, low, *_ = edited["data"]
    line = next(trace for trace in edited["data"] if trace["mode"] == "lines+markers")
    assert low["fill"] == "tonexty" and high["hoverinfo"] == "skip"
    assert "%{customdata[0]} of %{customdata[1]}" in line["hovertemplate"]
    points = list(zip(line["customdata"], rendered.values(line["y"]), strict=True))
    measured = [point for point in points if point[0][1] is not None]  # a week without a row is a gap
    assert measured and all(rate is None for (_, denominator, *_), rate in points if denominator is None)
    for (numerator, denominator, lower, upper, *_), rate in measured:
        assert 0 <= numerator <= denominator
        assert (rate is None) == (denominator == 0)
        assert rate is None or lower <= rate <= upper


def test_the_before_after_panel_shows_both_sides_the_difference_and_a_verdict(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"tab": "release"})

    labels = [metric.label for metric in app.metric]
    assert "Before" in labels and "From the release on" in labels and "Difference" in labels
    verdicts = " ".join(_texts(app.warning) + _texts(app.info) + _texts(app.success))
    assert "too few to tell" in verdicts  # 120 conversations cannot tell 5 points apart


def _inside_their_window(url: str) -> int:
    """Runs with a tool_write whose last write's window had not closed when the jobs ran (NOW) and without an
    outcome, counted here from the events."""
    e, o = schema.agentrun_event.c, schema.run_outcome.c
    engine = make_engine(url)
    with engine.connect() as connection:
        last_write: dict[int, int] = {}
        for run, crdate in connection.execute(select(e.run, e.crdate).where(e.kind == "tool_write")):
            last_write[int(run)] = max(last_write.get(int(run), 0), int(crdate))
        answered = set(connection.execute(select(o.run_uid)).scalars())
    engine.dispose()
    at = int(NOW.timestamp())
    return sum(1 for run, written in last_write.items() if at <= written + WINDOW_S and run not in answered)


def test_the_outcome_mix_shows_unknown_and_the_runs_whose_window_has_not_closed(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"tab": "outcomes"})

    mix = rendered.figures(app)[0]
    names = {trace["name"] for trace in mix["data"]}
    assert {"accepted unchanged", "edited", "discarded", "unknown", rates.WINDOW_OPEN} <= names
    waiting = next(trace for trace in mix["data"] if trace["name"] == rates.WINDOW_OPEN)
    shown = sum(rendered.values(waiting["y"]))
    assert shown > 0  # the demo plants runs inside their window
    assert shown == _inside_their_window(measured_db_url)  # as measure-rates stored them
    assert any(
        f"{plural(shown, 'run')} {rates.WINDOW_OPEN} as of the last measurement" in t
        for t in _texts(app.caption)
    )


def _counted_in_the_database(statement: str) -> bool:
    """The survival chart's reads of the outcome tables: counts and distinct values, never rows."""
    return bool(OUTCOME_AGGREGATE.search(statement) or ANY_DERIVED.search(statement))


def test_the_rates_page_reads_aggregates_only_never_the_runs_or_their_events(
    dashboard: Callable[..., AppTest], measured_db_url: str, statements: list[str]
) -> None:
    apps = [dashboard(measured_db_url, page="rates", query={"tab": tab}) for tab in rates_tab.NAMES]

    assert not any(app.exception for app in apps) and any(rendered.figures(app) for app in apps)
    assert statements
    assert [s for s in statements if RUN_TABLES.search(s) and not _counted_in_the_database(s)] == []
    outcomes = [s for s in statements if "tx_runrecord_run_outcome" in s and not _counted_in_the_database(s)]
    assert all("max(tx_runrecord_run_outcome.uid)" in s for s in outcomes)  # the data version only
    assert any("tx_runrecord_survival_tally" in s for s in statements)  # the survival, counted already
    assert not any("GROUP BY" in s and "tx_runrecord_write_outcome" in s for s in statements)


def test_a_database_measured_before_the_runs_inside_their_window_were_stored_says_so(
    dashboard: Callable[..., AppTest], measured_db_url: str, tmp_path: Path
) -> None:
    source = sqlite_path(parse_url(measured_db_url))
    assert source is not None
    shutil.copyfile(source, tmp_path / "older.sqlite")
    url = f"sqlite:///{tmp_path / 'older.sqlite'}"
    engine = make_engine(url)
    with engine.begin() as connection:  # as a measure-rates from before the metric left it
        left_by_an_older_runrecord(connection, rates_version=None)
        connection.execute(schema.rate.delete().where(schema.rate.c.metric == rates.WINDOW_OPEN_METRIC))
    engine.dispose()

    app = dashboard(url, page="rates", query={"tab": "outcomes"})

    assert not app.exception
    names = {trace["name"] for trace in rendered.figures(app)[0]["data"]}
    assert rates.WINDOW_OPEN not in names and "edited" in names
    assert any(outcome_mix.NOT_COUNTED in text for text in _texts(app.caption))


def _stored_agreement(url: str) -> tuple[int, int]:
    """notice_agreement as measure-rates stored it: every week of all runs summed."""
    r = schema.rate.c
    query = select(r.numerator, r.denominator).where(
        r.metric == Metric.NOTICE_AGREEMENT.value, r.grain == "week", r.group_kind == "all"
    )
    engine = make_engine(url)
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    engine.dispose()
    return sum(int(row.numerator) for row in rows), sum(int(row.denominator) for row in rows)


def test_the_agreement_with_the_chats_notices_is_charted_beside_the_nothing_saved_charts_with_its_figures(
    dashboard: Callable[..., AppTest], measured_db_url: str, demo_db_url: str
) -> None:
    source = sqlite_path(parse_url(demo_db_url))
    assert source is not None
    manifest = json.loads(source.with_suffix(".manifest.json").read_text(encoding="utf-8"))
    numerator, denominator = _stored_agreement(measured_db_url)

    app = dashboard(measured_db_url)

    assert not app.exception
    titles = [chart["layout"]["title"]["text"] for chart in rendered.figures(app)]
    charted = (Metric.NOTHING_SAVED_RATE, Metric.CLAIMED_UNWRITTEN_RATE, Metric.NOTICE_AGREEMENT)
    assert titles[1:4] == [rates.LABELS[metric] for metric in charted]
    shown = next(item for item in app.metric if item.label == notice_agreement.TITLE)
    assert shown.value == f"{numerator / denominator:.1%}"
    assert any(f"{numerator:,} of {denominator:,} completed answers" in text for text in _texts(app.caption))
    # The demo plants answers the chat flagged without a claim word of core's: the only disagreements.
    assert denominator - numerator == manifest["summary"]["notice_disagreements"] > 0


def test_a_database_measured_before_the_notice_agreement_was_stored_says_so(
    dashboard: Callable[..., AppTest], measured_db_url: str, tmp_path: Path
) -> None:
    source = sqlite_path(parse_url(measured_db_url))
    assert source is not None
    shutil.copyfile(source, tmp_path / "older.sqlite")
    url = f"sqlite:///{tmp_path / 'older.sqlite'}"
    engine = make_engine(url)
    with engine.begin() as connection:  # as a measure-rates of rates version 2 left it
        left_by_an_older_runrecord(connection, rates_version=2)
        connection.execute(schema.rate.delete().where(schema.rate.c.metric == Metric.NOTICE_AGREEMENT.value))
    engine.dispose()

    app = dashboard(url)

    assert not app.exception
    assert notice_agreement.TITLE not in [item.label for item in app.metric]
    assert notice_agreement.NOT_COUNTED in _texts(app.caption)


def test_every_rate_has_a_label_so_none_drops_out_of_the_comparison_or_the_split() -> None:
    assert set(rates.COMPARED) == set(RATES)
    assert Metric.NOTICE_AGREEMENT in rates.COMPARED


def test_the_edit_scope_split_names_every_scope(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"tab": "outcomes"})

    scopes = {trace["name"] for trace in rendered.figures(app)[1]["data"]}
    assert scopes == {label for _, label in rates.EDIT_SCOPES}


def test_a_configuration_with_fewer_than_five_runs_in_a_period_reads_too_few_to_show(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"tab": "configurations"})

    split = next(table for table in rendered.tables(app) if table.index.name == "period start")
    cells = [str(value) for value in split.to_numpy().ravel()]
    assert rates.TOO_FEW in cells
    assert any("%" in cell for cell in cells)


def test_the_csv_holds_aggregates_only_and_no_figure_of_a_group_under_five_runs(measured_db_url: str) -> None:
    engine = make_engine(measured_db_url)

    rows = list(csv.DictReader(io.StringIO(rates.aggregates_csv(engine))))
    engine.dispose()

    assert rows and list(rows[0]) == [
        "label", "metric", "grain", "period_start", "group", "group_kind", "group_value", "numerator",
        "denominator", "excluded", "rate", "wilson_low", "wilson_high", "note",
    ]  # fmt: skip
    runs = {
        (r["grain"], r["period_start"], r["group_kind"], r["group_value"]): int(r["numerator"])
        for r in rows
        if r["metric"] == Metric.RUNS.value and r["note"] == ""
    }
    hidden = [r for r in rows if r["note"] == rates.TOO_FEW]
    assert hidden and all(r["numerator"] == r["denominator"] == "" for r in hidden)
    counts = [
        r for r in rows if r["metric"] in (Metric.RUNS.value, Metric.WINDOW_OPEN.value) and r["note"] == ""
    ]
    assert {r["metric"] for r in counts} == {Metric.RUNS.value, Metric.WINDOW_OPEN.value}
    assert all(r["rate"] == r["wilson_low"] == r["wilson_high"] == "" for r in counts)  # counts, not rates
    for row in rows:
        if row["group_kind"] != "all" and row["note"] == "":
            assert runs[(row["grain"], row["period_start"], row["group_kind"], row["group_value"])] >= 5


def test_the_csv_names_each_metric_and_group_as_the_pages_do_beside_their_keys(measured_db_url: str) -> None:
    engine = make_engine(measured_db_url)

    rows = list(csv.DictReader(io.StringIO(rates.aggregates_csv(engine))))
    engine.dispose()

    assert {(r["label"], r["metric"]) for r in rows} >= {("EDITED", Metric.EDITED_RATE.value)}
    assert all(r["label"] == rates.LABELS[r["metric"]] for r in rows)
    assert {r["group"] for r in rows if r["group_kind"] == "skill" and r["group_value"] == NO_SKILL} <= {
        NO_SKILL
    }
    assert {r["group"] for r in rows if r["group_kind"] == "all"} == {"all runs"}
    assert all(
        r["group"] == f"configuration {r['group_value']}" for r in rows if r["group_kind"] == "configuration"
    )


def test_data_as_of_names_the_last_job_run(dashboard: Callable[..., AppTest], measured_db_url: str) -> None:
    app = dashboard(measured_db_url)

    assert any(
        caption.startswith("Data as of ") and "watch-conversations" in caption
        for caption in _texts(app.caption)
    )


def test_rates_say_to_run_measure_rates_before_any_rate_exists(
    dashboard: Callable[..., AppTest], demo_db_url: str
) -> None:
    app = dashboard(demo_db_url)

    assert not app.exception
    assert any("runrecord measure-rates" in text for text in _texts(app.info))
    assert any("no job has run" in text for text in _texts(app.caption))


def test_rates_say_what_to_do_on_a_database_without_tables(
    dashboard: Callable[..., AppTest], empty_sqlite_url: str
) -> None:
    app = dashboard(empty_sqlite_url)

    assert not app.exception
    assert "runrecord init-db" in app.info[0].value


def test_rates_survive_a_database_with_bad_rows(
    dashboard: Callable[..., AppTest], bad_row_db: tuple[str, dict[str, int | str]]
) -> None:
    app = dashboard(bad_row_db[0])

    assert not app.exception
    assert [title.value for title in app.title] == ["Rates"]


def _left_by_subtraction(all_runs: int, groups: dict[str, int | None]) -> int | None:
    """All runs less the groups shown (None: hidden); None where every group is hidden."""
    if all(count is None for count in groups.values()):
        return None
    return all_runs - sum(count for count in groups.values() if count is not None)


def test_no_group_hidden_in_the_csv_can_be_worked_out_from_all_runs_less_the_groups_shown(
    measured_db_url: str,
) -> None:
    engine = make_engine(measured_db_url)

    rows = list(csv.DictReader(io.StringIO(rates.aggregates_csv(engine))))
    engine.dispose()

    periods: dict[tuple[str, str, str], dict[str, int | None]] = {}
    every: dict[tuple[str, str], int] = {}
    for r in rows:
        if r["metric"] != Metric.RUNS.value:
            continue
        if r["group_kind"] == "all":
            every[(r["grain"], r["period_start"])] = int(r["numerator"])
            continue
        count = int(r["numerator"]) if r["note"] == "" else None
        periods.setdefault((r["grain"], r["period_start"], r["group_kind"]), {})[r["group_value"]] = count
    left = [_left_by_subtraction(every[key[:2]], groups) for key, groups in periods.items()]
    assert any(n is not None and n > 0 for n in left)  # the demo has such periods
    assert all(n is None or n == 0 or n >= 5 for n in left)


def test_no_group_hidden_in_a_split_can_be_worked_out_from_all_runs_less_the_groups_shown(
    measured_db_url: str,
) -> None:
    engine = make_engine(measured_db_url)

    every = rates.series(engine, [Metric.RUNS.value], "week", now=NOW).frame.set_index("period_start")
    split = rates.group_split(engine, Metric.EDITED_RATE.value, "week", "configuration", now=NOW)
    engine.dispose()

    left = [
        _left_by_subtraction(
            int(every.loc[period, "numerator"]),
            {
                str(g): (int(n) if shown else None)
                for g, n, shown in zip(part["group_value"], part["runs"], part["shown"], strict=True)
            },
        )
        for period, part in split.groupby("period_start")
    ]
    assert any(n is not None and n > 0 for n in left)
    assert all(n is None or n == 0 or n >= 5 for n in left)


def test_a_skill_with_answer_figures_but_no_runs_row_is_hidden_with_the_smallest_other_in_the_csv() -> None:
    # The answers of runs nr-llm purged keep their skill: all runs' answer figures less the skills shown
    # would be theirs.
    week = date(2026, 11, 16)
    counted = {("all", ""): 30, ("skill", "a"): 10, ("skill", ""): 20}
    runs = {("week", week, kind, value): n for (kind, value), n in counted.items()}
    rows = [
        *(RateRow("runs", "week", week, kind, value, n, n, 0) for (kind, value), n in counted.items()),
        RateRow("nothing_saved_rate", "week", week, "skill", "purged", 1, 2, 0),
        RateRow("edited_rate", "week", week, "skill", "a", 3, 10, 0),
    ]

    hidden = rates._hidden_by_period(runs, rows)

    assert hidden[("week", week, "skill", "nothing_saved_rate")] == {"purged", "a"}
    assert hidden[("week", week, "skill", "edited_rate")] == frozenset()
