"""The alert check after every measurement, `runrecord alerts` and `runrecord alerts ack ID`.

After measure-rates has committed its rates of the week grain, one unit of work reads the stored figures of
the closed weeks the checks need (adapters.rates), lets core.alerts say which comparisons are significant
moves — the measurement's comparisons corrected together (core.multiple_testing) — and inserts those
(adapters.alerts, insert-or-ignore on the move). A measurement of the day grain alone checks nothing: alerts
compare weeks (core.alerts.ALERT_GRAIN), and a closed week's figures are those a week-grain measurement
stored. Only the alerts really inserted by this run are POSTed to
RUNRECORD_ALERT_WEBHOOK, after the commit. Nothing here fails the measurement: a failed check or delivery
becomes part of the job run's message (`check_line`). The webhook's setting is read before the measurement
(jobs.measure.measure_and_alert): a malformed one stops it before anything is measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from adapters import alerts as alert_rows
from adapters import measure_marks, rates, releases, webhook
from adapters.database import RunrecordError, reported
from core import alerts as rules
from core.alert_text import alert_json, alert_line
from core.alerts import StoredAlert
from core.comparison import RATE_METRICS
from core.metrics import Metric
from core.periods import Grain
from core.two_sided import metrics_read
from jobs.job_log import JobResult, failure_line

# Each alert's POST: an answer within 5 s, at most 3 tries, 1 s and then 2 s apart. After an alert that could
# not be delivered at all, the others of the run are not tried: a webhook that is down would otherwise hold
# the measurement for up to 18 s an alert.
DELIVERY = webhook.Policy(timeout_s=5.0, attempts=3, backoff_s=1.0)
# The stored figures the check reads: every rate, and the runs its groups are judged by.
READ: tuple[Metric, ...] = tuple(dict.fromkeys(m for metric in RATE_METRICS for m in metrics_read(metric)))


@dataclass
class AlertCheck:
    """What the check after one measurement did."""

    grains: tuple[Grain, ...]  # the grains checked: ALERT_GRAIN when it was measured, else none
    comparisons: int = 0  # rate × group × check
    tested: int = 0  # the comparisons with both sides shown and holding data, corrected together
    new: list[StoredAlert] = field(default_factory=list)
    failure: str = ""  # why the check itself failed; "" when it ran
    webhook: str = ""  # the webhook's scheme and host; "" when none is set
    delivered: int = 0
    not_delivered: str = ""  # why a delivery failed; "" when every new alert was delivered (or none was sent)
    not_sent: int = 0  # new alerts not POSTed after a delivery failed


def check_alerts(
    engine: Engine,
    *,
    now: int,
    grains: Sequence[Grain],
    webhook_url: str | None,
    delivery: webhook.Policy | None = None,
) -> AlertCheck:
    """Write the significant moves of the closed weeks, when `grains` holds the week grain, then POST the new
    ones (with `delivery`, DELIVERY by default); never raises."""
    check = AlertCheck(tuple(grain for grain in grains if grain is rules.ALERT_GRAIN))
    if not check.grains:
        return check
    try:
        with engine.begin() as connection:
            markers = [(r.released_on, r.label) for r in releases.releases(connection)]
            first_open = measure_marks.first_open(connection, rules.ALERT_GRAIN, now=now)
            made = rules.checks(first_open, markers)
            figures = rates.figures_by_group(connection, rules.ALERT_GRAIN, READ, rules.periods_read(made))
            check.comparisons = len(made) * len(figures) * len(RATE_METRICS)
            measured = rules.compared(made, figures, first_open=first_open)
            check.tested = len(measured)
            check.new = alert_rows.save_alerts(connection, rules.alerts(measured), now=now)
    except Exception as error:  # the measurement is committed; the check is reported, never raised
        check.failure = failure_line(error)
        return check
    if webhook_url is not None:
        _deliver(check, webhook_url, delivery or DELIVERY)
    return check


def _deliver(check: AlertCheck, url: str, policy: webhook.Policy) -> None:
    check.webhook = webhook.location(url)
    for position, stored in enumerate(sorted(check.new, key=lambda one: one.uid)):
        result = webhook.post_json(url, alert_json(stored), policy)
        if not result.delivered:
            check.not_delivered = f"alert #{stored.uid}: {result.reason} ({_tries(result.attempts)})"
            check.not_sent = len(check.new) - position - 1
            return
        check.delivered += 1


def _tries(attempts: int) -> str:
    return "1 try" if attempts == 1 else f"{attempts} tries"


def check_line(check: AlertCheck) -> str:
    """The check in one clause of the job run's message: new alerts, and what became of their POSTs."""
    if check.failure:
        return f"alert check failed: {check.failure}"
    if not check.grains:
        return (
            f"alerts: not checked (alerts compare closed {rules.ALERT_GRAIN.value}s, measured at that grain)"
        )
    line = f"alerts: {len(check.new)} new"
    if check.new:
        kinds = [(kind, sum(1 for s in check.new if s.alert.kind is kind)) for kind in rules.AlertKind]
        line += " (" + ", ".join(f"{count} {kind.value}" for kind, count in kinds if count) + ")"
    line += f" of {check.comparisons:,} comparisons ({check.tested:,} tested, corrected together)"
    if not check.webhook:
        return f"{line}; not POSTed: {check.not_delivered}" if check.not_delivered else line
    if not check.new:
        return line
    line += f"; webhook {check.webhook}: {check.delivered} of {len(check.new)} delivered"
    if check.not_delivered:
        line += f", failed at {check.not_delivered}"
        if check.not_sent:
            line += f", {check.not_sent} not tried"
    return line


def with_alerts(result: JobResult, check: AlertCheck | None) -> JobResult:
    """The measurement's result with the check's clause added to its message."""
    if check is None:
        return result
    return JobResult(result.processed, result.failed, f"{result.message}; {check_line(check)}")


def check_json(check: AlertCheck) -> dict[str, Any]:
    """The check for `measure-rates --json`."""
    return {
        "grains": [grain.value for grain in check.grains],
        "comparisons": check.comparisons,
        "tested": check.tested,
        "failure": check.failure or None,
        "new": [alert_json(stored) for stored in check.new],
        "webhook": {
            "target": check.webhook or None,
            "delivered": check.delivered,
            "failure": check.not_delivered or None,
            "not_tried": check.not_sent,
        },
    }


def check_lines(check: AlertCheck) -> list[str]:
    """What measure-rates prints about the check: its clause, then a line per new alert."""
    return [f"  {check_line(check)} (runrecord alerts lists the open ones)"] + [
        f"    {alert_line(stored)}" for stored in check.new
    ]


# --- the command ------------------------------------------------------------------------------------------


class NoSuchAlertError(RunrecordError):
    """An alert id that tx_runrecord_alert does not hold."""


def list_alerts(engine: Engine, *, closed_too: bool = False) -> alert_rows.ListedAlerts:
    """The open alerts (every alert with `closed_too`), newest first, and the rows that cannot be read."""
    with reported(engine, "reading the alerts"), engine.connect() as connection:
        return alert_rows.listed_alerts(connection, closed_too=closed_too)


def close_alert(engine: Engine, uid: int, *, now: int) -> tuple[StoredAlert, bool]:
    """Close an open alert: the alert, and whether this closed it (False: it was closed already)."""
    with reported(engine, "closing the alert"), engine.begin() as connection:
        stored, closed = alert_rows.close_alert(connection, uid, now=now)
    if stored is None:
        raise NoSuchAlertError(f"no alert #{uid} (runrecord alerts --all lists every alert)")
    return stored, closed
