"""The scheduler's configuration: crontab expressions as crontab reads them, settings, the dry-run plan."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from click.testing import Result

from adapters.database import RunrecordError
from jobs.crontab import crontab_trigger
from jobs.scheduler_config import JOBS, JobSpec, SchedulerConfig, plan, schedule_of

UTC_ZONE = ZoneInfo("UTC")
MONDAY = datetime(2027, 1, 4, 12, 0, tzinfo=UTC_ZONE)


def weekdays_fired(expression: str) -> set[str]:
    """The weekdays the expression fires on in the fortnight after a Monday."""
    trigger = crontab_trigger(expression, UTC_ZONE)
    fired, now, previous = set(), MONDAY, None
    while now < MONDAY + timedelta(days=14):
        fire = trigger.get_next_fire_time(previous, now)
        assert fire is not None
        fired.add(fire.strftime("%a").lower())
        previous, now = fire, fire + timedelta(minutes=1)
    return fired


@pytest.mark.parametrize(
    ("weekday_field", "days"),
    [
        ("0", {"sun"}),  # crontab: 0 is Sunday (APScheduler 3 alone would read Monday)
        ("7", {"sun"}),
        ("1-5", {"mon", "tue", "wed", "thu", "fri"}),
        ("5-7", {"fri", "sat", "sun"}),
        ("*/2", {"sun", "tue", "thu", "sat"}),
        ("1,3", {"mon", "wed"}),
        ("mon", {"mon"}),
        ("sat,sun", {"sat", "sun"}),
        ("*", {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}),
    ],
)
def test_a_crontab_weekday_means_what_it_means_to_cron(weekday_field: str, days: set[str]) -> None:
    assert weekdays_fired(f"0 3 * * {weekday_field}") == days


@pytest.mark.parametrize("expression", ["30 2 * *", "61 * * * *", "0 3 * * 8", "0 3 * * 5-1", "every night"])
def test_a_malformed_crontab_expression_fails_in_one_line_naming_the_job(expression: str) -> None:
    with pytest.raises(RunrecordError, match="derive-outcomes") as raised:
        crontab_trigger(expression, UTC_ZONE, named=schedule_of("derive-outcomes"))

    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("expression", ["0 0 31 2 *", "0 0 31 4,6,9,11 *", "0 0 30 2 *"])
def test_an_expression_no_date_matches_is_refused_as_never_firing(expression: str) -> None:
    with pytest.raises(RunrecordError, match="never fires") as raised:
        crontab_trigger(expression, UTC_ZONE, named=schedule_of("derive-outcomes"))

    assert "derive-outcomes" in str(raised.value) and "\n" not in str(raised.value)


def test_february_the_29th_fires_in_a_leap_year() -> None:
    assert crontab_trigger("0 0 29 2 *", UTC_ZONE, named=schedule_of("derive-outcomes")) is not None


def test_an_expression_with_a_full_width_digit_is_no_crontab_expression() -> None:
    with pytest.raises(RunrecordError, match="other than ASCII"):
        crontab_trigger("\uff11 0 * * *", UTC_ZONE, named=schedule_of("derive-outcomes"))


@pytest.mark.parametrize("expression", ["0 0 13 * 5", "0 0 1,15 * mon-fri", "0 0 1-7 * 1"])
def test_an_expression_restricting_both_the_day_of_month_and_the_weekday_is_refused_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, expression: str
) -> None:
    monkeypatch.setenv("RUNRECORD_DERIVE_CRON", expression)

    with pytest.raises(RunrecordError, match="restricts both the day of the month and the weekday") as raised:
        SchedulerConfig.from_settings()

    assert "RUNRECORD_DERIVE_CRON" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("expression", "first_runs"),
    [
        ("0 0 13 * *", [datetime(2027, 1, 13, tzinfo=UTC_ZONE), datetime(2027, 2, 13, tzinfo=UTC_ZONE)]),
        ("0 0 * * 5", [datetime(2027, 1, 8, tzinfo=UTC_ZONE), datetime(2027, 1, 15, tzinfo=UTC_ZONE)]),
        # a field beginning with * does not restrict, as in crontab: both must match
        ("0 0 */2 * 5", [datetime(2027, 1, 15, tzinfo=UTC_ZONE), datetime(2027, 1, 29, tzinfo=UTC_ZONE)]),
    ],
)
def test_an_expression_restricting_the_day_of_month_or_the_weekday_runs_when_crontab_would(
    expression: str, first_runs: list[datetime]
) -> None:
    trigger = crontab_trigger(expression, UTC_ZONE, named=schedule_of("derive-outcomes"))

    first = trigger.get_next_fire_time(None, MONDAY)
    assert first is not None
    second = trigger.get_next_fire_time(first, first + timedelta(minutes=1))

    assert [first, second] == first_runs


def test_dry_run_refuses_a_schedule_crontab_would_read_otherwise_in_one_line(
    monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Result]
) -> None:
    monkeypatch.setenv("RUNRECORD_DERIVE_CRON", "0 0 13 * 5")

    result = run_cli("scheduler", "--db", "sqlite:///nowhere/at/all.sqlite", "--dry-run")

    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "RUNRECORD_DERIVE_CRON" in result.stderr


def test_a_crontab_expression_is_read_in_the_configured_time_zone() -> None:
    trigger = crontab_trigger("30 2 * * *", ZoneInfo("Europe/Berlin"))

    fire = trigger.get_next_fire_time(None, datetime(2027, 1, 4, 12, 0, tzinfo=UTC))

    assert fire is not None and fire.astimezone(UTC) == datetime(2027, 1, 5, 1, 30, tzinfo=UTC)


def test_the_default_configuration_runs_derive_nightly_measure_after_it_and_watch_every_five_minutes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in (
        "RUNRECORD_DERIVE_CRON",
        "RUNRECORD_MEASURE_CRON",
        "RUNRECORD_WATCH_CRON",
        "RUNRECORD_SCHEDULER_TIMEZONE",
        "RUNRECORD_MISFIRE_GRACE_SECONDS",
        "RUNRECORD_SCHEDULER_LEASE_SECONDS",
    ):
        monkeypatch.delenv(variable, raising=False)

    config = SchedulerConfig.from_settings()

    assert config.jobs == (
        JobSpec("derive-outcomes", "jobs.derive:run_job", "30 2 * * *"),
        JobSpec("measure-rates", "jobs.measure:run_job", "after derive-outcomes"),
        JobSpec("watch-conversations", "jobs.watch:run_job", "*/5 * * * *"),
    )
    assert (config.timezone, config.misfire_grace_s, config.lease_s) == (UTC_ZONE, 3600, 60)
    assert config.job("measure-rates").after == "derive-outcomes"


def test_the_environment_configures_every_schedule_the_time_zone_grace_and_lease(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNRECORD_DERIVE_CRON", "15 1 * * 1-5")
    monkeypatch.setenv("RUNRECORD_MEASURE_CRON", "0 6 * * *")
    monkeypatch.setenv("RUNRECORD_WATCH_CRON", "*/10 * * * *")
    monkeypatch.setenv("RUNRECORD_SCHEDULER_TIMEZONE", "Europe/Berlin")
    monkeypatch.setenv("RUNRECORD_MISFIRE_GRACE_SECONDS", "600")
    monkeypatch.setenv("RUNRECORD_SCHEDULER_LEASE_SECONDS", "30")

    config = SchedulerConfig.from_settings()

    assert [spec.schedule for spec in config.jobs] == ["15 1 * * 1-5", "0 6 * * *", "*/10 * * * *"]
    assert (config.timezone.key, config.misfire_grace_s, config.lease_s) == ("Europe/Berlin", 600, 30)
    assert config.job("measure-rates").after is None


@pytest.mark.parametrize(
    ("variable", "value", "complaint"),
    [
        ("RUNRECORD_SCHEDULER_TIMEZONE", "Mars/Olympus", "^RUNRECORD_SCHEDULER_TIMEZONE: .* not a time zone"),
        ("RUNRECORD_SCHEDULER_TIMEZONE", "Europe", "^RUNRECORD_SCHEDULER_TIMEZONE: .* not a time zone"),
        ("RUNRECORD_SCHEDULER_LEASE_SECONDS", "2", "from 3 to 86400"),
        ("RUNRECORD_SCHEDULER_LEASE_SECONDS", "99999999999999999999", "from 3 to 86400"),
        ("RUNRECORD_MISFIRE_GRACE_SECONDS", "99999999999999999999", "from 1 to 604800"),
        ("RUNRECORD_WINDOW_DAYS", "abc", "RUNRECORD_WINDOW_DAYS"),
        ("RUNRECORD_MISFIRE_GRACE_SECONDS", "soon", "not a whole number"),
        (
            "RUNRECORD_MEASURE_CRON",
            "after breakfast",
            r"^measure-rates \(RUNRECORD_MEASURE_CRON\) .* not another",
        ),
        ("RUNRECORD_MEASURE_CRON", "after measure-rates", "not another configured job"),
        ("RUNRECORD_WATCH_CRON", "*/5 * * *", "watch-conversations"),
    ],
)
def test_a_bad_setting_fails_in_one_line(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, complaint: str
) -> None:
    monkeypatch.setenv(variable, value)

    with pytest.raises(RunrecordError, match=complaint) as raised:
        SchedulerConfig.from_settings()

    assert "\n" not in str(raised.value)


def test_jobs_that_each_run_after_another_in_a_ring_are_refused_naming_their_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # measure-rates runs after derive-outcomes by default: derive-outcomes after it closes the ring.
    monkeypatch.setenv("RUNRECORD_DERIVE_CRON", "after measure-rates")

    with pytest.raises(RunrecordError) as raised:
        SchedulerConfig.from_settings()

    assert str(raised.value) == (
        "derive-outcomes (RUNRECORD_DERIVE_CRON) → measure-rates (RUNRECORD_MEASURE_CRON) each run after the "
        "next: none of them would ever run"
    )


def test_the_plan_gives_each_job_its_next_run_and_says_which_cannot_be_loaded() -> None:
    config = SchedulerConfig(
        jobs=(
            JobSpec("derive-outcomes", "jobs.nowhere:run_job", "30 2 * * *"),
            JobSpec("measure-rates", "jobs.watch:run_job", "after derive-outcomes"),
            JobSpec("watch-conversations", "jobs.watch:run_job", "*/5 * * * *"),
        ),
        timezone=UTC_ZONE,
        misfire_grace_s=3600,
        lease_s=60,
    )

    planned = plan(config, MONDAY.replace(minute=2))

    assert [(p.spec.name, p.next_run) for p in planned] == [
        ("derive-outcomes", datetime(2027, 1, 5, 2, 30, tzinfo=UTC_ZONE)),
        ("measure-rates", datetime(2027, 1, 5, 2, 30, tzinfo=UTC_ZONE)),
        ("watch-conversations", datetime(2027, 1, 4, 12, 5, tzinfo=UTC_ZONE)),
    ]
    assert planned[0].problem is not None and "No module named 'jobs.nowhere'" in planned[0].problem
    assert [p.problem for p in planned[1:]] == [None, None]


def test_dry_run_lists_the_three_jobs_with_their_next_run_times(run_cli: Callable[..., Result]) -> None:
    result = run_cli("scheduler", "--db", "sqlite:///nowhere/at/all.sqlite", "--dry-run")

    assert result.exit_code == 0, result.stderr
    listed = result.stdout.splitlines()[1:]
    assert [line.split()[0] for line in listed] == list(JOBS)
    assert all(" next " in line for line in listed)


def test_the_job_store_keeps_the_database_url_without_its_password() -> None:
    from jobs import job_log
    from jobs.scheduler import _args
    from jobs.scheduler_config import JobSpec

    url = "postgresql+psycopg://runrecord:s3cret-pw@db.example/typo3"
    spec = JobSpec("watch-conversations", "jobs.watch:run_job", "*/5 * * * *")

    stored = _args(spec, url)
    job_log.use_database(url)

    assert "s3cret-pw" not in repr(stored)
    assert job_log._DATABASES[stored[2]] == url
