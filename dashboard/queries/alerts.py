"""The open alerts, as the Rates and Health pages list them: each a rate that moved significantly after a
measurement (core.alerts), worded as `runrecord alerts` words it (core.alert_text). The rows come from
adapters.alerts; an alert exists only for a group shown in every period it compares, so none names a small
group, and none names a run or an editor.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Engine

from adapters import alerts as alert_rows
from adapters import schema
from adapters.database import reported
from adapters.runs import RunFilter
from core.alert_text import compared_text, difference_text, side_text, verdict_text
from core.alerts import StoredAlert
from core.formatting import group_text, p_text
from core.metrics import DEFINITIONS, parse_metric
from dashboard.queries import drill_down
from dashboard.queries.common import when

# Each row leads with what moved, read whole in its wide column: the verdict, before, after and the
# difference; then what it is about.
COLUMNS = [
    "verdict",
    "before",
    "after",
    "difference",
    "group",
    "runs",
    "compared",
    "p",
    "adjusted p",
    "since (UTC)",
    "alert",
    "rate",
]


def adjusted_figure(value: float | None) -> str:
    """Benjamini–Hochberg's adjusted p in its column, as the p beside it reads ("p = 0.0170"), or "not kept"
    for an alert written before it was."""
    return "not kept" if value is None else p_text(value)


@dataclass(frozen=True)
class OpenAlerts:
    """The open alerts as a table, and the line naming the alert rows that cannot be read ("" when none)."""

    table: pd.DataFrame
    unreadable: str


def open_alerts(engine: Engine, tables: frozenset[str]) -> OpenAlerts | None:
    """The open alerts, newest first, one row each; None when the database has no alert table yet."""
    if schema.alert.name not in tables:
        return None
    with reported(engine, "reading the alerts"), engine.connect() as connection:
        listed = alert_rows.listed_alerts(connection)
    rows = []
    for stored in listed.alerts:
        alert = stored.alert
        metric = parse_metric(alert.metric)
        rows.append(
            {
                "before": side_text(alert.before),
                "after": side_text(alert.after),
                "difference": difference_text(alert),
                "verdict": verdict_text(alert),
                "runs": alert_runs(stored),
                "group": group_text(alert.group),
                "compared": f"{compared_text(alert)} ({alert.grain}s)",
                "p": p_text(alert.p_value),
                "adjusted p": adjusted_figure(alert.adjusted_p_value),
                "since (UTC)": when(stored.created_at),
                "alert": stored.uid,
                "rate": alert.metric if metric is None else DEFINITIONS[metric].label,
            }
        )
    unreadable = alert_rows.unreadable_line(listed.unreadable) if listed.unreadable else ""
    return OpenAlerts(pd.DataFrame(rows, columns=COLUMNS), unreadable)


def alert_runs(stored: StoredAlert) -> RunFilter:
    """The runs behind the alert's after side (drill_down: its period, its group, its numerator's runs)."""
    alert = stored.alert
    return drill_down.runs_of(alert.metric, alert.group, alert.after_from, alert.after_to)


def acknowledge(engine: Engine, uids: list[int], *, now: int) -> int:
    """Close these open alerts, as `runrecord alerts ack ID` does, in one transaction: how many this closed
    (an alert closed already, or gone, is left as it is)."""
    closed = 0
    with reported(engine, "acknowledging the alerts"), engine.begin() as connection:
        for uid in uids:
            closed += int(alert_rows.close_alert(connection, uid, now=now)[1])
    return closed
