"""The summary row on top of the Rates page: a tile per headline rate (core.summary), its last closed period
with n and interval, the change against the period before and across the newest release, each change green
when it is a significant move for the better, red for the worse, grey otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import streamlit as st

from core.comparison import ComparisonReport
from core.formatting import count, interval_text, percent, points
from core.metrics import Metric
from core.summary import Tile, Tone
from core.two_sided import TOO_FEW_TO_SHOW
from core.verdicts import RULE

# A tile is narrow (five in a row): its title wraps under the value instead of the metric's own label, which
# would be cut; the registry's labels are longer.
TITLES: dict[Metric, str] = {
    Metric.EDITED_RATE: "EDITED",
    Metric.NOTHING_SAVED_RATE: "nothingSaved, stored",
    Metric.CLAIMED_UNWRITTEN_RATE: "nothingSaved, recomputed",
    Metric.DENIAL_RATE: "denials of earlier work",
    Metric.GO_ON_WHILE_WAITING: '"go on" while waiting',
}
COLOURS: dict[Tone, str] = {Tone.BETTER: "green", Tone.WORSE: "red", Tone.NONE: "gray"}
NO_FIGURE = "–"


def show(found: Sequence[Tile], grain: str, *, key: str) -> None:
    """The tiles in one row, each in a bordered box keyed `{key}_{metric}`."""
    for column, tile in zip(st.columns(len(found)), found, strict=True):
        with column.container(border=True, key=f"{key}_{tile.metric.value}"):
            _tile(tile, grain)
    st.caption(
        f"Each tile: the last closed {grain} with its 95% interval, the change against the {grain} before "
        "it and across the newest release (4 weeks on each side). Green: a significant move for the better; "
        f"red: for the worse; grey: no significant move. {RULE[0].upper()}{RULE[1:]}."
    )


def _change(report: ComparisonReport) -> float | None:
    comparison = report.two_sided.comparison
    return None if comparison is None else comparison.difference


def _arrow(difference: float | None) -> Literal["up", "down", "off"]:
    """The delta's arrow by its sign: Streamlit reads the sign from the text, and takes the formatter's true
    minus ("−0.2") for a rise; a change that reads "0.0" has none."""
    shown = 0.0 if difference is None else round(difference * 100, 1)  # as the delta's text reads
    if shown == 0:
        return "off"
    return "up" if shown > 0 else "down"


def _tile(tile: Tile, grain: str) -> None:
    title = TITLES.get(tile.metric, tile.metric.value)
    side = tile.previous.after
    st.markdown(f"**{title}**")
    if not side.shown:
        st.metric(title, NO_FIGURE, label_visibility="collapsed")
        st.caption(f"{grain} of {tile.period.isoformat()}: {TOO_FEW_TO_SHOW}")
        return
    proportion = side.proportion
    difference = _change(tile.previous)
    st.metric(
        title,
        NO_FIGURE if proportion.rate is None else percent(proportion.rate),
        delta=None if difference is None else f"{points(difference)} pts",
        delta_color=COLOURS[tile.previous_tone],  # type: ignore[arg-type]
        delta_arrow=_arrow(difference),
        label_visibility="collapsed",
    )
    figures = f"{count(proportion.numerator)} of {count(proportion.denominator)}"
    interval = proportion.interval
    if interval is not None:
        figures += f", 95% CI {interval_text(interval.low, interval.high)}"
    against = (
        tile.previous.two_sided.verdict
        if difference is not None or not tile.previous.before.shown
        else "no data"
    )
    st.caption(
        f"{grain} of {tile.period.isoformat()}: {figures}. Against the {grain} before: "
        f":{COLOURS[tile.previous_tone]}[{against}]"
    )
    _release(tile)


def _release(tile: Tile) -> None:
    report = tile.release
    if report is None:
        st.caption("No release marker yet.")
        return
    difference = _change(report)
    colour = COLOURS[tile.release_tone]
    if report.two_sided.verdict == TOO_FEW_TO_SHOW or difference is None:
        text = TOO_FEW_TO_SHOW if report.two_sided.verdict == TOO_FEW_TO_SHOW else "no data on both sides"
    else:
        text = (
            f"{percent(report.before.proportion.rate)} → {percent(report.after.proportion.rate)}, "
            f"{points(difference)} pts: {report.two_sided.verdict}"
        )
    st.markdown(f"Across the release of {report.at.isoformat()}: :{colour}[{text}]")
