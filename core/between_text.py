"""A configuration against another as `runrecord compare --between` prints it, `--json` gives it and the Rates
page frames it: its framing of core.two_sided_text's report."""

from __future__ import annotations

from typing import Any

from core.between import BetweenReport
from core.formatting import group_text, plural
from core.two_sided_text import Framing, document, lines

KEYS = ("first", "second")


def _name(report: BetweenReport, index: int) -> str:
    return report.groups[index].value or "(none)"


def framing(report: BetweenReport, label: str | None = None) -> Framing:
    """The second configuration against the first over the periods both have; `label` names the metric on
    the page."""
    two_sided = report.two_sided
    first, second = (group_text(group) for group in report.groups)
    names = (_name(report, 0), _name(report, 1))
    span = f"{report.periods[0].isoformat()} – {report.last_day().isoformat()}"
    periods = plural(len(report.periods), f"closed {two_sided.grain.value}")
    sentence = (
        f"{label or two_sided.metric.value}, {names[1]} against {names[0]} over {periods} ({span}): "
        f"**{two_sided.verdict}**."
    )
    return Framing(
        heading=f"{two_sided.metric.value}, {second} against {first}",
        names=names,
        labels=names,
        keys=KEYS,
        titles=names,
        sentence=sentence,
        lead=(f"over {span}: {periods} both have",),
        about={
            "grain": two_sided.grain.value,
            "between": [group.label for group in report.groups],
            "from": report.periods[0].isoformat(),
            "to": report.last_day().isoformat(),
            "periods": len(report.periods),
        },
    )


def between_text(report: BetweenReport) -> list[str]:
    """The comparison as the lines compare --between prints."""
    return lines(report.two_sided, framing(report))


def between_json(report: BetweenReport) -> dict[str, Any]:
    """The comparison for `--json`; a side too few to show carries no figures."""
    return document(report.two_sided, framing(report))
