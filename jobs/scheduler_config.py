"""The scheduler's configuration: which jobs it runs and when, read once from the settings and checked, and
the plan --dry-run prints (no database, no APScheduler scheduler involved)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from adapters import settings
from adapters.database import RunrecordError
from jobs import job_log
from jobs.crontab import crontab_trigger, parse_timezone

# The jobs the scheduler runs, by name: the textual reference of each one's callable (jobs.job_log).
JOBS: dict[str, str] = {
    "derive-outcomes": "jobs.derive:run_job",
    "measure-rates": "jobs.measure:run_job",
    "watch-conversations": "jobs.watch:run_job",
}

# The setting that holds each job's schedule.
SCHEDULE_SETTINGS: dict[str, str] = {
    "derive-outcomes": "derive_cron",
    "measure-rates": "measure_cron",
    "watch-conversations": "watch_cron",
}

AFTER = "after "  # a schedule "after JOB": run when JOB has finished without an error


def schedule_of(job: str) -> str:
    """How an error names a job's schedule: the job, and the variable of the setting that holds it."""
    setting = SCHEDULE_SETTINGS.get(job)
    return job if setting is None else f"{job} ({settings.variable(setting)})"


@dataclass(frozen=True)
class JobSpec:
    """A job as configured: its name, its callable's reference and its schedule."""

    name: str
    target: str
    schedule: str

    @property
    def after(self) -> str | None:
        """The job this one follows, for a schedule "after JOB"; None for a crontab expression."""
        return self.schedule[len(AFTER) :].strip() if self.schedule.startswith(AFTER) else None


@dataclass(frozen=True)
class SchedulerConfig:
    """Everything the scheduler is configured with, read once at the edge (`from_settings`)."""

    jobs: tuple[JobSpec, ...]
    timezone: ZoneInfo
    misfire_grace_s: int
    lease_s: float

    @classmethod
    def from_settings(cls) -> SchedulerConfig:
        """The configuration the settings registry gives (environment, else defaults); checked."""
        zone = settings.get("scheduler_timezone")
        try:
            timezone = parse_timezone(zone)
        except RunrecordError as error:
            raise RunrecordError(f"{settings.variable('scheduler_timezone')}: {error}") from error
        config = cls(
            jobs=tuple(JobSpec(n, t, settings.get(SCHEDULE_SETTINGS[n]).strip()) for n, t in JOBS.items()),
            timezone=timezone,
            misfire_grace_s=settings.misfire_grace_seconds(),
            lease_s=settings.lease_seconds(),
        )
        config.check()
        settings.window_days()  # every job reads it: a malformed value stops the scheduler before it starts
        return config

    def check(self) -> None:
        """Every schedule is a crontab expression or follows a configured job, and every chain of "after JOB"
        starts at a crontab expression; RunrecordError naming the setting if not."""
        names = {spec.name for spec in self.jobs}
        for spec in self.jobs:
            if spec.after is None:
                crontab_trigger(spec.schedule, self.timezone, named=schedule_of(spec.name))
            elif spec.after not in names or spec.after == spec.name:
                others = ", ".join(sorted(names - {spec.name}))
                raise RunrecordError(
                    f"{schedule_of(spec.name)} is to run {spec.schedule!r}, but that is not another "
                    f"configured job ({others})"
                )
        for spec in self.jobs:
            chain = self.chain(spec.name)
            follows = self.job(chain[-1]).after
            if follows is not None:  # a ring: each waits for another to finish, and none ever starts
                cycle = " → ".join(schedule_of(name) for name in chain[chain.index(follows) :])
                raise RunrecordError(f"{cycle} each run after the next: none of them would ever run")

    def chain(self, name: str) -> list[str]:
        """The job and, in turn, the jobs it runs after ("after JOB"): up to one that follows none, or in a
        ring up to the one whose next is named already."""
        chain = [name]
        while (follows := self.job(chain[-1]).after) is not None and follows not in chain:
            chain.append(follows)
        return chain

    def job(self, name: str) -> JobSpec:
        """The configured job of that name."""
        for spec in self.jobs:
            if spec.name == name:
                return spec
        raise RunrecordError(f"no job named {name!r} is configured")

    @property
    def renew_every_s(self) -> float:
        """A lease is renewed, and a waiting process polls, every third of its length."""
        return self.lease_s / 3


# --- the plan (--dry-run) -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedJob:
    """A configured job for --dry-run: its next run time and whether its callable can be loaded."""

    spec: JobSpec
    next_run: datetime | None  # for "after JOB", the next run of JOB
    problem: str | None


def plan(config: SchedulerConfig, now: datetime) -> tuple[PlannedJob, ...]:
    """The configured jobs with their next run times after `now`; no database involved."""
    next_runs: dict[str, datetime | None] = {}
    for spec in config.jobs:
        if spec.after is None:
            trigger = crontab_trigger(spec.schedule, config.timezone, named=schedule_of(spec.name))
            next_runs[spec.name] = trigger.get_next_fire_time(None, now)
    planned = []
    for spec in config.jobs:
        try:
            job_log.resolve(spec.target)
            problem = None
        except RunrecordError as error:
            problem = str(error)
        # For "after JOB", the next run of the job its chain starts at (none in a ring).
        next_run = next_runs.get(config.chain(spec.name)[-1])
        planned.append(PlannedJob(spec, next_run, problem))
    return tuple(planned)
