"""The dashboard's engine and cached queries: caching lives here, never in the query functions.

Every cached result is keyed on the database URL and the marks of the tables it reads (common.DataVersion:
the tables present, the newest uid of each table the jobs write, the newest rate computation), so a job run
that changes them makes the pages read again at once. The Rates page's results depend on the jobs alone and
live for an hour (the time in their keys is rounded to it); the Runs and Conversation pages read upstream
rows, which change without a job run, for five minutes; Health for one.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pandas as pd
import streamlit as st
from sqlalchemy import Engine

from adapters import clock, settings
from adapters.database import make_engine, parse_url
from adapters.health import Reading
from adapters.runs import Bound, RunFilter
from core.between import BetweenReport
from core.comparison import ComparisonReport
from core.groups import ALL_RUNS, Group, parse_group
from core.summary import Tile
from dashboard.queries import (
    alerts,
    between,
    common,
    conversations,
    go_on,
    health,
    rates,
    run,
    runs,
    survival,
)

CACHE_TTL_S = 300  # upstream rows (runs, messages) change without a job run; five minutes is fresh enough
RATES_TTL_S = 3600  # the rates change only with a job run (in the key); "now" in their keys moves hourly
HEALTH_TTL_S = 60  # the watch job reads every five minutes; a minute keeps Health close to it
MINUTE_S = 60  # "now" in cache keys is rounded to the minute, so a rerun within it reads the cache
HOUR_S = 3600


@st.cache_resource(show_spinner=False)
def _engine(url: str) -> Engine:
    return make_engine(url)


def db_url() -> str:
    """The database the dashboard reads (RUNRECORD_DB, set by `runrecord dashboard`)."""
    return settings.get("db")


def engine() -> Engine:
    """One engine per dashboard process and database URL."""
    return _engine(db_url())


def now() -> int:
    """The current time in unix seconds, rounded down to the minute (a cache key part)."""
    return clock.unix() // MINUTE_S * MINUTE_S


def hour() -> int:
    """The current time rounded down to the hour: the Rates page's open periods and windows move no faster."""
    return clock.unix() // HOUR_S * HOUR_S


def today(at: int) -> date:
    """The UTC day of a time from now() or hour(): where the Rates page's time ranges end."""
    return datetime.fromtimestamp(at, UTC).date()


def window_s() -> int:
    """The derivation's window (RUNRECORD_WINDOW_DAYS) in seconds; RunrecordError when it is malformed
    (guard.show says so before a page reads it)."""
    return settings.window_seconds()


def version() -> common.DataVersion:
    """The data version, read on every rerun: the table list, a primary-key lookup per versioned table and
    the newest rate computation."""
    return common.data_version(engine())


def location() -> str:
    """The database for captions: never its password."""
    return parse_url(db_url()).render_as_string(hide_password=True)


# --- every page ---------------------------------------------------------------------------------------------


@st.cache_data(ttl=HEALTH_TTL_S, show_spinner=False)
def last_job_run(url: str, data: common.Marks) -> common.LastJobRun | None:
    """The newest finished job run ("data as of")."""
    return common.last_job_run(_engine(url), data.tables)


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False)
def table_counts(url: str, data: common.Marks) -> pd.DataFrame:
    """Rows per table."""
    return common.table_counts(_engine(url), data.tables)


# --- Rates --------------------------------------------------------------------------------------------------


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def grains(url: str, data: common.Marks) -> list[str]:
    """The grains measured."""
    return rates.grains(_engine(url))


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def rate_series(url: str, data: common.Marks, metrics: tuple[str, ...], grain: str, at: int) -> rates.Series:
    """The rows of some metrics (group all) with rates, intervals and open periods."""
    return rates.series(_engine(url), metrics, grain, now=at)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def first_period(url: str, data: common.Marks, grain: str) -> date | None:
    """The first period measured at a grain."""
    return rates.first_period(_engine(url), grain)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def group_values(url: str, data: common.Marks, grain: str) -> tuple[list[str], list[str]]:
    """The configurations and skills the rates hold at a grain."""
    return rates.group_values(_engine(url), grain)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def summary(
    url: str, data: common.Marks, grain: str, group: str, release: date | None, at: int
) -> tuple[Tile, ...]:
    """The summary tiles of a group (all, configuration:X, skill:Y) across the newest release."""
    return rates.summary(_engine(url), grain, parse_group(group) or ALL_RUNS, release, now=at)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def releases(url: str, data: common.Marks) -> pd.DataFrame:
    """The release markers."""
    return rates.releases(_engine(url))


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def before_after(
    url: str,
    data: common.Marks,
    metric: str,
    grain: str,
    released_on: date,
    weeks: int,
    at: int,
    group: Group = ALL_RUNS,
) -> ComparisonReport:
    """A marker's before/after comparison (as `runrecord compare`), of all runs or of one group."""
    return rates.before_after(_engine(url), metric, grain, released_on, weeks, now=at, group=group)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def go_on_split(
    url: str, data: common.Marks, grain: str, released_on: date, weeks: int, at: int
) -> tuple[go_on.PathSides, ...] | None:
    """What followed the stored "go on" messages on both sides of a marker; None: not measured."""
    return go_on.go_on_split(_engine(url), data.tables, grain, released_on, weeks, now=at)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def outcome_mix(url: str, data: common.Marks, grain: str, at: int) -> pd.DataFrame:
    """Derived runs per period and outcome."""
    return rates.outcome_mix(_engine(url), grain, now=at)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def window_open(url: str, data: common.Marks, grain: str) -> pd.DataFrame | None:
    """Runs inside their window without an outcome, per period, as measured; None: not measured."""
    return rates.window_open(_engine(url), data.tables, grain)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def notice_agreement(url: str, data: common.Marks, grain: str) -> rates.Agreement | None:
    """The recomputed notice's agreement with the stored one, every period summed; None: not measured."""
    return rates.notice_agreement(_engine(url), data.tables, grain)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def group_split(
    url: str, data: common.Marks, metric: str, grain: str, group_kind: str, at: int
) -> pd.DataFrame:
    """A metric per group and period, small groups blanked."""
    return rates.group_split(_engine(url), metric, grain, group_kind, now=at)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def rate_configurations(url: str, data: common.Marks, grain: str) -> list[tuple[str, date]]:
    """The configurations the rates hold, each with its first period."""
    return between.configurations(_engine(url), grain)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def configuration_against_configuration(
    url: str, data: common.Marks, metric: str, grain: str, first: str, second: str, at: int
) -> BetweenReport | None:
    """One configuration against another (as `runrecord compare --between`)."""
    return between.between(_engine(url), metric, grain, first, second, now=at)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def outcome_configurations(url: str, data: common.Marks) -> list[str]:
    """The configurations of the derived runs (`data`: the outcomes' mark)."""
    return survival.configurations(_engine(url), data.tables)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def survival_curves(
    url: str, data: common.Marks, configurations: tuple[str, ...], window: int
) -> survival.SurvivalView | None:
    """The survival of AI text (as `runrecord survival`) as the chart draws it, never the curves' steps;
    `data`: the outcomes' mark."""
    return survival.curves(_engine(url), data.tables, configurations, window_s=window)


@st.cache_data(ttl=RATES_TTL_S, show_spinner=False)
def aggregates_csv(url: str, data: common.Marks) -> str:
    """Every rate row as CSV, small groups blanked."""
    return rates.aggregates_csv(_engine(url))


# --- Rates and Health ---------------------------------------------------------------------------------------


@st.cache_data(ttl=MINUTE_S, show_spinner=False)
def open_alerts(url: str, data: common.Marks) -> alerts.OpenAlerts | None:
    """The open alerts, newest first; None: the database has no alert table. A measurement that writes one
    changes `data`; closing one changes no mark, so it leaves the pages within the minute."""
    return alerts.open_alerts(_engine(url), data.tables)


def acknowledge_alerts(url: str, uids: list[int]) -> int:
    """Close these alerts (an administrator on the page; the caller checks the role); the cached list is
    dropped so that they leave the pages at once. How many this closed."""
    closed = alerts.acknowledge(_engine(url), uids, now=now())
    open_alerts.clear()
    return closed


# --- Runs ---------------------------------------------------------------------------------------------------


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False)
def configurations(url: str, data: common.Marks) -> list[str]:
    """The configuration identifiers."""
    return runs.configurations(_engine(url), data.tables)


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False)
def skills(url: str, data: common.Marks) -> list[str]:
    """The skills of the measured runs' conversations."""
    return runs.skills(_engine(url), data.tables)


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False)
def full_uuids(url: str, data: common.Marks, reference: str) -> tuple[str, ...]:
    """The uuid of the run a uuid or short id names; none, or two when several runs start with it."""
    return runs.full_uuids(_engine(url), reference)


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False)
def runs_page(
    url: str, data: common.Marks, chosen: RunFilter, before: Bound | None, at: int, window: int
) -> runs.RunsPage:
    """One keyset page of runs."""
    return runs.runs_page(_engine(url), chosen, data.tables, before=before, now=at, window_s=window)


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False)
def run_detail(url: str, data: common.Marks, uuid: str, at: int, window: int) -> run.RunDetail:
    """One run in full."""
    return run.run_detail(_engine(url), uuid, data.tables, now=at, window_s=window)


# --- Conversation -------------------------------------------------------------------------------------------


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False)
def recent_conversations(url: str, data: common.Marks, before_uid: int | None) -> pd.DataFrame:
    """A page of conversations, newest first."""
    return conversations.recent(_engine(url), before_uid=before_uid)


def own_transcript_skills() -> tuple[str, ...]:
    """The skills whose conversations get no notes (RUNRECORD_OWN_TRANSCRIPT_SKILLS), sorted, as a cache key
    part; RunrecordError when the setting is malformed (guard.show says so before a page reads it)."""
    return tuple(sorted(settings.own_transcript_skills()))


@st.cache_data(ttl=CACHE_TTL_S, show_spinner=False)
def conversation(
    url: str, data: common.Marks, uid: int, own_transcript: tuple[str, ...]
) -> conversations.Loaded:
    """A conversation, its run record rebuilt from events, the notes its next turn gets, the readings of its
    answers and the notes each turn was given."""
    return conversations.load(_engine(url), uid, own_transcript)


# --- Health -------------------------------------------------------------------------------------------------


@st.cache_data(ttl=HEALTH_TTL_S, show_spinner=False)
def job_runs(url: str, data: common.Marks, at: int) -> pd.DataFrame:
    """The newest job runs; a running one silent for too long at `at` reads as interrupted."""
    return health.job_runs(_engine(url), now=at)


@st.cache_data(ttl=HEALTH_TTL_S, show_spinner=False)
def freshness(url: str, data: common.Marks, at: int) -> pd.DataFrame:
    """Each job's last run and whether it is fresh."""
    return health.freshness(_engine(url), now=at)


@st.cache_data(ttl=HEALTH_TTL_S, show_spinner=False)
def health_reading(url: str, data: common.Marks) -> Reading | None:
    """The newest watch-conversations reading."""
    return health.latest_reading(_engine(url), data.tables)


@st.cache_data(ttl=MINUTE_S, show_spinner=False)
def stuck_conversations(url: str, data: common.Marks, at: int) -> pd.DataFrame:
    """Conversations stuck in a claimed status now."""
    return health.stuck_now(_engine(url), now=at)


@st.cache_data(ttl=HEALTH_TTL_S, show_spinner=False)
def reads_automation_user(url: str, data: common.Marks) -> bool:
    """Whether be_users names the `_cli_` user (DESIGN.md rule 4)."""
    return health.reads_automation_user(_engine(url))


@st.cache_data(ttl=HEALTH_TTL_S, show_spinner=False)
def horizon(url: str, data: common.Marks, at: int, window: int) -> health.HorizonView:
    """The history horizon against the window, now."""
    return health.horizon_now(_engine(url), data.tables, now=at, window_s=window)
