"""A small installation of two configurations, a stable one and a canary, for compare --between and survival.

Four closed ISO weeks, from the fifth week before the one holding `now`; six SEO runs of each configuration
a week, each writing one page: one of the stable configuration's six is edited by hand three days after its
write, five of the canary's six an hour after it. A third configuration (`rare-assistant`) has three runs,
all in one week: too few to show. Every row is written by the builder and the jobs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import Engine, update

from adapters import schema
from core.periods import Grain, period_start, unix_of
from core.time import DAY_S
from data.agent_run import Run
from data.builder import Installation
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates

DAY = DAY_S
HOUR = 3600
WINDOW = 7 * DAY
NOW = int(datetime(2026, 12, 2, 12, tzinfo=UTC).timestamp())  # a Wednesday
NOW_TEXT = "2026-12-02T12:00:00"
STABLE = "seo-assistant"
CANARY = "seo-assistant-canary"
RARE = "rare-assistant"
RUNS_A_WEEK = 6
STABLE_EDITED_A_WEEK = 1
CANARY_EDITED_A_WEEK = 5
STABLE_EDIT_AFTER_S = 3 * DAY
CANARY_EDIT_AFTER_S = HOUR


@contextmanager
def installation(engine: Engine) -> Iterator[Installation]:
    with engine.begin() as connection:
        site = Installation(connection)
        yield site
        site.finish()


def seo_run(site: Installation, configuration: str, at: int, *, edited_after_s: int | None = None) -> Run:
    """A run that writes a page's SEO title; an editor changes the page `edited_after_s` after the write."""
    page = site.page("Produkte", at=at - 30 * DAY)
    chat = site.conversation(configuration=configuration, skill="seo-check", page=page, at=at)
    chat.user("Prüfe die SEO-Felder.", at=at)
    run = chat.run()
    run.propose("update_page_seo", page, fields=("seo_title",))
    run.approve(at=at + 60)
    run.answer("Der Seitentitel ist gespeichert.")
    run.finish()
    chat.close()
    if edited_after_s is not None:
        site.human_edit(page, {"seo_title": "von Hand"}, at=run.writes[0].written_at + edited_after_s)
    return run


def first_week(now: int) -> date:
    """The first of the four weeks: five weeks before the week holding `now`."""
    return period_start(now, Grain.WEEK) - timedelta(weeks=5)


def plant_two_configurations(engine: Engine, *, now: int = NOW) -> None:
    """The stable configuration, its canary and the rare one, as the module docstring says; every window
    has closed at `now` (the last write is twelve days or more before the Monday of the week of `now`)."""
    first = unix_of(first_week(now))
    with installation(engine) as site:
        for week in range(4):
            start = first + week * 7 * DAY + DAY  # Tuesdays on
            for n in range(RUNS_A_WEEK):
                at = start + n * 4 * HOUR
                stable = STABLE_EDIT_AFTER_S if n < STABLE_EDITED_A_WEEK else None
                seo_run(site, STABLE, at, edited_after_s=stable)
                canary = CANARY_EDIT_AFTER_S if n < CANARY_EDITED_A_WEEK else None
                seo_run(site, CANARY, at + HOUR, edited_after_s=canary)
        for n in range(3):
            seo_run(site, RARE, first + 2 * DAY + n * HOUR, edited_after_s=HOUR)


# The rules an older runrecord derived the first night's runs under (sorts before core.outcomes.RULE_VERSION).
OLD_RULE_VERSION = "2026.10-1"
# The weeks (0 to 3) of plant_two_configurations: the first night derives week 0 and half of week 1.
MIXED_WEEK = 1


def mixed_week(now: int = NOW) -> date:
    """The week whose runs two nights derived, under two rule versions."""
    return first_week(now) + timedelta(weeks=MIXED_WEEK)


def derived_under_two_rule_versions(engine: Engine, *, now: int = NOW, window_s: int = WINDOW) -> None:
    """Two nights of derive-outcomes, then measure-rates (week and day) as of `now`: the first night, under
    OLD_RULE_VERSION, reaches the runs of week 0 and the first three of each configuration in MIXED_WEEK
    (their writes' windows have closed ten hours into its Tuesday a week later); the second, under
    core.outcomes.RULE_VERSION, derives the rest and leaves the first night's rows as they are."""
    first_night = unix_of(mixed_week(now)) + DAY + WINDOW + 10 * HOUR
    derive_outcomes(engine, now=first_night, window_s=window_s)
    with engine.begin() as connection:
        for table in (schema.run_outcome, schema.write_outcome):
            connection.execute(update(table).values(rule_version=OLD_RULE_VERSION))
    derive_outcomes(engine, now=now, window_s=window_s)
    measure_rates(engine, now=now, window_s=window_s, grains=(Grain.WEEK, Grain.DAY))


def derived_and_measured(engine: Engine, *, window_s: int = WINDOW) -> None:
    """derive-outcomes and measure-rates (week and day) as of NOW."""
    derive_outcomes(engine, now=NOW, window_s=window_s)
    measure_rates(engine, now=NOW, window_s=window_s, grains=(Grain.WEEK, Grain.DAY))
