"""The scheduler on the nights the clocks change in Europe/Berlin: a job runs as crontab would run it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from jobs.crontab import crontab_trigger
from jobs.scheduler_config import SchedulerConfig, plan

BERLIN = ZoneInfo("Europe/Berlin")
SPRING = datetime(2026, 3, 29, 1, 0, tzinfo=UTC)  # 02:00 CET becomes 03:00 CEST
AUTUMN = datetime(2026, 10, 25, 1, 0, tzinfo=UTC)  # 03:00 CEST becomes 02:00 CET


def fires(expression: str, night: datetime, hours: int = 48) -> list[str]:
    """The fire times (UTC, "day HH:MM") of the expression in the `hours` from the day before the night."""
    trigger = crontab_trigger(expression, BERLIN)
    start = night.replace(hour=0) - timedelta(days=1)
    found, previous, now = [], None, start
    while True:
        fire = trigger.get_next_fire_time(previous, now)
        assert fire is not None
        if fire >= start + timedelta(hours=hours):
            return found
        found.append(fire.astimezone(UTC).strftime("%d %H:%M"))
        previous, now = fire, fire


def test_a_nightly_job_runs_once_on_the_night_the_clocks_go_back() -> None:
    assert fires("30 2 * * *", AUTUMN, hours=72) == ["24 00:30", "25 00:30", "26 01:30"]


def test_a_nightly_job_in_the_hour_the_clocks_skip_runs_once_an_hour_later_by_the_wall_clock() -> None:
    assert fires("30 2 * * *", SPRING, hours=72) == ["28 01:30", "29 01:30", "30 00:30"]


def test_a_fire_time_in_the_hour_the_clocks_skip_reads_as_the_time_it_runs_on_the_zones_clock() -> None:
    # 02:30 CET does not exist that night: the dry run names the job's run as the clocks on the wall show it.
    fire = crontab_trigger("30 2 * * *", BERLIN).get_next_fire_time(None, SPRING - timedelta(hours=2))

    assert fire is not None and f"{fire:%Y-%m-%d %H:%M %Z}" == "2026-03-29 03:30 CEST"


def test_jobs_of_two_fixed_hours_run_once_each_on_both_nights() -> None:
    autumn = [fire for fire in fires("0,30 2,3 * * *", AUTUMN) if fire.startswith("25")]
    spring = [fire for fire in fires("0,30 2,3 * * *", SPRING) if fire.startswith("29")]

    assert autumn == ["25 00:00", "25 00:30", "25 02:00", "25 02:30"]  # 02:00, 02:30 CEST; 03:00, 03:30 CET
    assert spring == ["29 01:00", "29 01:30"]  # 02:00, 02:30 CET do not exist: 03:00 and 03:30 CEST


def test_a_job_of_every_hour_runs_through_the_repeated_hour_twice_as_crontab_does() -> None:
    autumn = [fire for fire in fires("*/30 * * * *", AUTUMN) if fire.startswith("25")]

    assert autumn[:7] == ["25 00:00", "25 00:30", "25 01:00", "25 01:30", "25 02:00", "25 02:30", "25 03:00"]
    assert len(autumn) == len(set(autumn)) == 2 * 24


@pytest.mark.parametrize(
    ("clock", "derive_next"),
    [
        (datetime(2026, 10, 25, 0, 45, tzinfo=UTC), "2026-10-26T01:30:00+00:00"),  # 02:45 CEST, after the run
        (
            datetime(2026, 10, 25, 1, 10, tzinfo=UTC),
            "2026-10-26T01:30:00+00:00",
        ),  # 02:10 CET, the second pass
        (datetime(2026, 3, 29, 0, 50, tzinfo=UTC), "2026-03-29T01:30:00+00:00"),  # 01:50 CET, before the skip
    ],
)
def test_the_dry_run_plan_at_a_change_of_the_clocks_names_the_next_night(
    clock: datetime, derive_next: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNRECORD_SCHEDULER_TIMEZONE", "Europe/Berlin")
    config = SchedulerConfig.from_settings()

    planned = {job.spec.name: job.next_run for job in plan(config, clock.astimezone(BERLIN))}

    derive = planned["derive-outcomes"]
    assert derive is not None and derive.astimezone(UTC).isoformat() == derive_next
    assert planned["measure-rates"] == derive
