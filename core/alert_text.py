"""An alert as `runrecord alerts` prints it, and as its `--json` and the webhook's POST give it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.alerts import Alert, AlertKind, StoredAlert
from core.formatting import group_text, interval_text, p_text, percent, points
from core.metrics import DEFINITIONS, Better, parse_metric
from core.rates import Proportion
from core.verdicts import FELL, ROSE, Finding, judged, worded


def side_text(proportion: Proportion) -> str:
    """A side: rate (numerator/denominator, 95% CI low – high)."""
    interval = proportion.interval
    spread = "" if interval is None else f", 95% CI {interval_text(interval.low, interval.high)}"
    return f"{percent(proportion.rate)} ({proportion.numerator:,}/{proportion.denominator:,}{spread})"


def compared_text(alert: Alert) -> str:
    """What was compared: "week of 2026-11-16 against the 4 weeks before" or "release 2026-10-10 (label)"."""
    if alert.kind is AlertKind.TREND:
        return (
            f"{alert.grain} of {alert.at.isoformat()} against {alert.before_from.isoformat()} – "
            f"{alert.before_to.isoformat()}"
        )
    label = f" ({alert.label})" if alert.label else ""
    return (
        f"release {alert.at.isoformat()}{label}: {alert.before_from.isoformat()} – "
        f"{alert.before_to.isoformat()} against {alert.after_from.isoformat()} – {alert.after_to.isoformat()}"
    )


def difference_text(alert: Alert) -> str:
    """The difference in points with its Newcombe interval."""
    return (
        f"{points(alert.difference)} points (95% CI {points(alert.interval.low)} to "
        f"{points(alert.interval.high)})"
    )


def _better(alert: Alert) -> Better:
    metric = parse_metric(alert.metric)
    return Better.NEITHER if metric is None else DEFINITIONS[metric].better


def worth_text(alert: Alert) -> str:
    """The move's worth after a colon (": worse"); "" for a metric that moves neither way by itself."""
    worth = judged(_better(alert), alert.difference)
    return "" if worth is None else f": {worth}"


def verdict_text(alert: Alert) -> str:
    """The move in words, with the metric's label: "EDITED rose significantly: worse"."""
    metric = parse_metric(alert.metric)
    label = alert.metric if metric is None else DEFINITIONS[metric].label
    moved = worded(Finding.SIGNIFICANT, alert.difference, rise=ROSE, drop=FELL, better=_better(alert))
    return f"{label} {moved}"


def adjusted_text(alert: Alert) -> str:
    """Benjamini–Hochberg's adjusted p as it reads in a line: "adjusted p = 0.0170", or that an alert written
    before it was kept has none."""
    if alert.adjusted_p_value is None:
        return "adjusted p not kept"
    return f"adjusted {p_text(alert.adjusted_p_value)}"


def alert_line(stored: StoredAlert) -> str:
    """One line: id, metric, group, what was compared, before → after with intervals, difference, p and the
    adjusted p."""
    alert = stored.alert
    closed = "" if stored.closed_at == 0 else f"; closed {_when(stored.closed_at)}"
    return (
        f"#{stored.uid} {alert.metric}, {group_text(alert.group)}, {compared_text(alert)} ({alert.grain}s): "
        f"{side_text(alert.before)} → {side_text(alert.after)}, {alert.direction} of "
        f"{difference_text(alert)}{worth_text(alert)}, {p_text(alert.p_value)}, {adjusted_text(alert)}; "
        f"since {_when(stored.created_at)}{closed}"
    )


def _when(unix: int) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _iso(unix: int) -> str:
    return datetime.fromtimestamp(unix, UTC).isoformat()


def _side(proportion: Proportion, first: str, last: str) -> dict[str, Any]:
    interval = proportion.interval
    return {
        "from": first,
        "to": last,
        "numerator": proportion.numerator,
        "denominator": proportion.denominator,
        "rate": proportion.rate,
        "wilson_95": None if interval is None else [interval.low, interval.high],
    }


def alert_json(stored: StoredAlert) -> dict[str, Any]:
    """The alert for `--json` and the webhook's POST body."""
    alert = stored.alert
    return {
        "id": stored.uid,
        "metric": alert.metric,
        "grain": alert.grain,
        "group": alert.group.label,
        "kind": alert.kind.value,
        "at": alert.at.isoformat(),
        "release": alert.label if alert.kind is AlertKind.RELEASE else None,
        "before": _side(alert.before, alert.before_from.isoformat(), alert.before_to.isoformat()),
        "after": _side(alert.after, alert.after_from.isoformat(), alert.after_to.isoformat()),
        "difference": {
            "after_minus_before": alert.difference,
            "newcombe_95": [alert.interval.low, alert.interval.high],
            "p_value": alert.p_value,
            "adjusted_p_value": alert.adjusted_p_value,
            "direction": alert.direction,
            "worth": judged(_better(alert), alert.difference),
        },
        "verdict": verdict_text(alert),
        "status": stored.status.value,
        "created_at": _iso(stored.created_at),
        "closed_at": None if stored.closed_at == 0 else _iso(stored.closed_at),
        "text": alert_line(stored),
    }
