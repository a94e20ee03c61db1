"""Crontab expressions read as crontab reads them, as APScheduler 3 triggers in a time zone.

crontab and APScheduler 3 differ in three places, each settled here: crontab counts weekdays from Sunday = 0
(and 7), APScheduler from Monday = 0; crontab runs a job whose day of the month and weekday are both
restricted on either day, a CronTrigger only on a day that is both (refused); and crontab runs a job of a
fixed hour once on the night the clocks go back, a CronTrigger twice.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.cron import CronTrigger

from adapters.database import RunrecordError, one_line

# crontab counts weekdays from Sunday = 0 (and 7); APScheduler 3 from Monday = 0. Names mean the same to both.
_CRONTAB_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


class CrontabTrigger(CronTrigger):
    """A CronTrigger that, as crontab does, runs a job of a fixed hour once on the night the clocks go back:
    the second pass through the repeated hour is skipped. A job whose hour field begins with "*" runs in both
    passes, as in crontab. In the hour the clocks skip, a job runs once, an hour after its wall-clock time
    (02:30 CET, which does not exist, is 03:30 CEST), where crontab runs it at the change (03:00); its fire
    time is given as the zone's clocks show it."""

    def get_next_fire_time(self, previous_fire_time: datetime | None, now: datetime) -> datetime | None:
        fire: datetime | None = super().get_next_fire_time(previous_fire_time, now)
        probe = now
        # Around a change of the clocks a CronTrigger can answer a time it answered already (asked from
        # inside the repeated hour, or for two times of the hour that was skipped): step past it.
        while fire is not None and (
            (self._fixed_hour() and _second_pass(fire))
            or (previous_fire_time is not None and _utc(fire) <= _utc(previous_fire_time))
        ):
            probe = max(probe, fire) + timedelta(minutes=1)
            fire = super().get_next_fire_time(fire, probe)
        # A wall-clock time the clocks skipped names its moment on the zone's clock (the same instant).
        return None if fire is None else _utc(fire).astimezone(fire.tzinfo)

    def _fixed_hour(self) -> bool:
        return not str(self.fields[CronTrigger.FIELD_NAMES.index("hour")]).startswith("*")


def _utc(moment: datetime) -> datetime:
    """The moment in UTC: two times of one zone compare by their wall clocks, which repeat in the night the
    clocks go back."""
    return moment.astimezone(UTC)


def _second_pass(moment: datetime) -> bool:
    """Whether the moment's wall-clock time happened once already that night (the clocks went back)."""
    zone, wall = moment.tzinfo, moment.replace(tzinfo=None)
    first, second = wall.replace(tzinfo=zone, fold=0), wall.replace(tzinfo=zone, fold=1)
    return first.utcoffset() != second.utcoffset() and moment.utcoffset() == second.utcoffset()


def crontab_trigger(expression: str, timezone: ZoneInfo, *, named: str = "a job") -> CronTrigger:
    """A CronTrigger that fires when crontab would (minute hour day month weekday, weekday 0/7 = Sunday);
    RunrecordError naming the schedule as `named` (the job, and the setting that holds it) if it cannot.

    An expression that restricts both the day of the month and the weekday is refused: crontab runs it on
    either day, a CronTrigger only on a day that is both. A field beginning with "*" does not restrict, as
    in crontab ("*/2" neither), and then both read it alike.
    """
    fields = expression.split()
    try:
        if len(fields) != 5:
            raise ValueError(f"it has {len(fields)} fields, not 5 (minute hour day month weekday)")
        minute, hour, day, month, weekday = fields
        if not day.startswith("*") and not weekday.startswith("*"):
            raise RunrecordError(
                f"the schedule of {named}, {expression!r}, restricts both the day of the month and the "
                "weekday, which crontab runs on either day and this scheduler cannot: make one of them *"
            )
        if not expression.isascii():
            raise ValueError("it holds characters other than ASCII ones (a full-width digit, say)")
        trigger = CrontabTrigger(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=_weekday_names(weekday),
            timezone=timezone,
        )
    except ValueError as error:
        raise RunrecordError(
            f"the schedule of {named}, {expression!r}, is not a crontab expression: {one_line(error)}"
        ) from error
    # From a fixed day, not today: a date the expression matches comes within the next leap-year cycle.
    if trigger.get_next_fire_time(None, datetime(2000, 1, 1, tzinfo=timezone)) is None:
        raise RunrecordError(
            f"the schedule of {named}, {expression!r}, never fires: no date has that day in that month"
        )
    return trigger


def _weekday_names(field: str) -> str:
    """crontab's weekday field with its numbers turned into day names, which APScheduler 3 reads alike."""
    if not any(character.isdigit() for character in field):
        return field
    days: set[int] = set()
    for part in field.split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if span == "*":
            first, last = 0, 6
        elif "-" in span:
            first_text, last_text = span.split("-", 1)
            first, last = _weekday(first_text), _weekday(last_text)
        else:
            first = _weekday(span)
            last = 6 if step_text else first
        if first > last or step < 1:
            raise ValueError(f"weekday {part!r} is not a range crontab accepts")
        days.update(day % 7 for day in range(first, last + 1, step))
    return ",".join(_CRONTAB_WEEKDAYS[day] for day in sorted(days))


def _weekday(text: str) -> int:
    if text.isdigit() and int(text) <= 7:
        return int(text)
    if text.lower() in _CRONTAB_WEEKDAYS:
        return _CRONTAB_WEEKDAYS.index(text.lower())
    raise ValueError(f"{text!r} is not a weekday (0-7 or sun-sat)")


def parse_timezone(name: str) -> ZoneInfo:
    """The IANA time zone of that name; RunrecordError naming it if there is none."""
    try:
        return ZoneInfo(name.strip())
    # OSError: an area's name ("Europe") is a directory of the zone database, not a zone.
    except (ZoneInfoNotFoundError, ValueError, OSError) as error:
        raise RunrecordError(f"{name!r} is not a time zone (an IANA name such as Europe/Berlin)") from error
