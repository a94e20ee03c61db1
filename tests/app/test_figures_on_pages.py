"""Every figure on the pages reads in the formatter's one style (core.formatting), and every verdict says
which way is good (core.verdicts): the cases the dashboard got wrong, each rendered by the component that
shows it."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from core.formatting import MINUS
from tests.app import rendered
from tests.app.conftest import TIMEOUT_S


def _comparison(metric: str, before: int, after: int, per_side: int) -> None:
    """The before/after panel for `metric`: `before` and `after` of `per_side` on each side of a release."""
    from datetime import UTC, date, datetime

    from core.comparison import comparison_report
    from core.counting import Count
    from core.groups import ALL_RUNS
    from core.metrics import Metric
    from core.periods import Grain, comparison_periods, open_from
    from dashboard.components import two_sided
    from dashboard.queries.rates import LABELS

    at = date(2026, 10, 12)
    sides = comparison_periods(at, 1, Grain.WEEK)
    figures = {
        (metric, sides.before[0]): Count(before, per_side, 0),
        (metric, sides.after[0]): Count(after, per_side, 0),
        (Metric.RUNS.value, sides.before[0]): Count(per_side, per_side, 0),
        (Metric.RUNS.value, sides.after[0]): Count(per_side, per_side, 0),
    }
    long_after = int(datetime(2027, 6, 1, tzinfo=UTC).timestamp())
    report = comparison_report(
        Metric(metric),
        at,
        sides,
        figures,
        weeks=1,
        group=ALL_RUNS,
        grain=Grain.WEEK,
        releases=(),
        first_open=open_from(long_after, 7 * 86_400, None, Grain.WEEK),
    )
    two_sided.show(report, LABELS[metric], key="comparison")


def _between(metric: str, first: int, second: int, per_side: int) -> None:
    """Configuration against configuration for `metric`: `first` and `second` of `per_side` in one week."""
    from datetime import date

    from core.between import between_report
    from core.counting import Count
    from core.groups import Group, GroupKind
    from core.metrics import Metric
    from core.periods import Grain
    from dashboard.components import two_sided
    from dashboard.queries.rates import LABELS

    week = date(2026, 10, 5)
    figures = tuple(
        {(metric, week): Count(n, per_side, 0), (Metric.RUNS.value, week): Count(per_side, per_side, 0)}
        for n in (first, second)
    )
    groups = (Group(GroupKind.CONFIGURATION, "stable"), Group(GroupKind.CONFIGURATION, "canary"))
    report = between_report(
        Metric(metric), Grain.WEEK, groups, (week,), (figures[0], figures[1]), first_open=date(2026, 11, 2)
    )
    two_sided.show(report, LABELS[metric], key="between")


def _run(script: Callable[..., None], *args: object) -> AppTest:
    app = AppTest.from_function(script, args=args, default_timeout=TIMEOUT_S).run()
    assert not app.exception
    return app


def _boxes(app: AppTest) -> dict[str, list[str]]:
    return {
        kind: [str(element.value) for element in getattr(app, kind)]
        for kind in ("error", "success", "info", "warning")
    }


# --- the formatter's cases ----------------------------------------------------------------------------------


def test_a_p_value_below_the_smallest_four_decimals_show_reads_p_below_it_never_p_equals_zero() -> None:
    app = _run(_comparison, "edited_rate", 10, 900, 1000)

    captions = " ".join(caption.value for caption in app.caption)
    assert "p < 0.0001" in captions
    assert not re.search(r"p = 0\.0+\b", captions)


def test_a_p_value_reads_with_four_decimals_on_the_page_as_on_the_command_line() -> None:
    app = _run(_comparison, "edited_rate", 30, 42, 200)

    captions = " ".join(caption.value for caption in app.caption)
    assert re.search(r"p = 0\.\d{4}\b", captions)
    assert not re.search(r"p = 0\.\d{3}\b", captions)


def test_a_drop_in_points_reads_with_a_true_minus_sign_in_the_tile_and_its_interval() -> None:
    app = _run(_comparison, "edited_rate", 300, 195, 1000)

    difference = next(metric for metric in app.metric if metric.label == "Difference")
    assert difference.value == f"{MINUS}10.5 points"
    interval = next(caption.value for caption in app.caption if "Newcombe" in caption.value)
    assert MINUS in interval and not re.search(r"(?<![\w])-\d", interval)


def test_counts_of_thousands_read_with_separators() -> None:
    app = _run(_comparison, "edited_rate", 2034, 2060, 2060)

    assert any("2,034 of 2,060" in caption.value for caption in app.caption)


def _pager(total: int) -> None:
    from dashboard.components import pager

    pager.show(total, 50, None, min(total, 50), key="pager")


@pytest.mark.parametrize(("total", "text"), [(1, "· 1 run"), (2060, "· 2,060 runs")])
def test_a_count_of_runs_takes_the_singular_for_one(total: int, text: str) -> None:
    app = _run(_pager, total)

    assert any(markdown.value.endswith(text) for markdown in app.markdown)


def _stuck(seconds: int) -> None:
    from core.health import StuckConversation
    from dashboard.components import conversation_state

    conversation_state.show(StuckConversation(31, "running", 1_700_000_000, seconds), [], None, key="state")


def test_a_long_stuck_time_reads_in_days_not_in_minutes() -> None:
    app = _run(_stuck, 151_784 * 60)

    assert "(105 days)" in app.error[0].value and "minutes" not in app.error[0].value


def test_conversations_without_a_skill_read_no_skill_in_the_split_by_skill(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"tab": "configurations", "group": "skill"})

    text = rendered.text(app)
    assert "(no skill)" in text and "skill none" not in text


def test_observed_outcomes_read_as_words_on_the_runs_page_and_in_the_outcome_mix(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    runs = dashboard(measured_db_url, page="runs")
    rates = dashboard(measured_db_url, page="rates", query={"tab": "outcomes"})

    shown = set(rendered.tables(runs)[0]["outcome"])
    traces = {trace.get("name", "") for figure in rendered.figures(rates) for trace in figure["data"]}
    assert "accepted unchanged" in shown | traces
    assert not {"ACCEPTED_UNCHANGED", "accepted_unchanged"} & (shown | traces)


# --- each verdict's wording ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "before", "after", "box", "verdict"),
    [
        ("edited_rate", 290, 850, "error", "**EDITED rose significantly: worse**"),
        ("edited_rate", 850, 290, "success", "**EDITED fell significantly: better**"),
        ("accepted_unchanged_rate", 290, 850, "success", "**ACCEPTED UNCHANGED rose significantly: better**"),
        ("notice_agreement", 990, 700, "error", "fell significantly: worse**"),
        ("edited_same_fields", 290, 850, "success", "same fields (the AI's own fields) rose significantly**"),
        ("edited_rate", 300, 301, "info", "**EDITED: no difference of 5 points or more**"),
    ],
    ids=["a bad rate rose", "a bad rate fell", "a good rate rose", "a good rate fell", "neither", "none"],
)
def test_a_before_after_verdict_says_the_move_and_whether_it_is_better_or_worse(
    metric: str, before: int, after: int, box: str, verdict: str
) -> None:
    app = _run(_comparison, metric, before, after, 1000)

    assert any(verdict in text for text in _boxes(app)[box]), _boxes(app)


def test_too_few_to_tell_is_a_warning_with_no_better_or_worse() -> None:
    app = _run(_comparison, "edited_rate", 3, 6, 20)

    warnings = _boxes(app)["warning"]
    assert any("**EDITED: too few to tell**" in text for text in warnings)
    assert not any("better" in text or "worse" in text for text in warnings)


@pytest.mark.parametrize(
    ("first", "second", "box", "verdict"),
    [
        (200, 600, "error", "significantly higher: worse"),
        (600, 200, "success", "significantly lower: better"),
    ],
)
def test_a_configuration_against_another_says_higher_or_lower_and_better_or_worse(
    first: int, second: int, box: str, verdict: str
) -> None:
    app = _run(_between, "edited_rate", first, second, 1000)

    assert any("canary against stable" in text and f"**{verdict}**" in text for text in _boxes(app)[box])


def test_a_comparison_of_one_week_a_side_says_one_week() -> None:
    app = _run(_comparison, "edited_rate", 290, 850, 1000)

    texts = [text for texts in _boxes(app).values() for text in texts]
    captions = [caption.value for caption in app.caption]
    assert any(text.endswith(", 1 week each side.") for text in texts)
    assert any("(1 of 1 week with data)" in caption for caption in captions)
    assert not any("1 weeks" in text for text in texts + captions)


# Forms the formatter never writes: a p with three decimals, a hyphen for a minus, an outcome's key, the old
# name of the skill-less group, "1" with a plural noun, a count of five digits or more without separators.
NOT_THE_FORMATTERS = {
    "a p-value of three decimals": r"p = 0\.\d{3}\b",
    "a hyphen-minus": r"(?<![\w\-–])-\d",
    "an outcome's key": r"ACCEPTED_UNCHANGED|accepted_unchanged",
    "skill none": r"skill none",
    "one with a plural noun": r"\b1 (runs|weeks|days|conversations|writes|notes|alerts)\b",
    "a count without separators": r"(?<![\w.,-])\d{5,}(?![\w.-])",  # a uuid's digits aside
}


def _shown(app: AppTest) -> list[str]:
    """What a reader sees as text: elements, metric tiles and table cells, links aside."""
    texts = [str(element.value) for kind in ("markdown", "caption", "info", "warning", "success", "error")
             for element in getattr(app, kind)]  # fmt: skip
    texts += [f"{metric.label} {metric.value}" for metric in app.metric]
    cells = [str(value) for table in rendered.tables(app) for value in table.to_numpy().ravel()]
    return texts + [cell for cell in cells if not cell.startswith(("run?", "runs?"))]


@pytest.mark.parametrize("page", [None, "runs", "health"], ids=["rates", "runs", "health"])
def test_no_page_shows_a_figure_in_a_form_the_formatter_never_writes(
    dashboard: Callable[..., AppTest], measured_db_url: str, page: str | None
) -> None:
    app = dashboard(measured_db_url, page=page, administrator=page == "health")

    shown = "\n".join(_shown(app))

    assert not app.exception
    for name, pattern in NOT_THE_FORMATTERS.items():
        assert not re.search(pattern, shown), (name, re.findall(f".{{0,30}}(?:{pattern}).{{0,10}}", shown))
