"""The tables runrecord reads and writes, as SQLAlchemy Core `Table` objects: the one place a table is found.

Ours carry the prefix `tx_runrecord_` and are declared here; they are created and upgraded by the Alembic
migrations in jobs/migrations, which must stay in step with the definitions here (a test compares them). The
installation's (TYPO3 core, nr-llm, the AI chat) are declared in adapters.upstream_schema and named here too.

The rule modules of core/ never import SQLAlchemy; every table they are counted over is declared in one of
the two.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Date,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    Unicode,
    UniqueConstraint,
)
from sqlalchemy.dialects import mysql

from adapters.columns import double, integer, string, uid_column
from adapters.upstream_schema import REQUIRED_UPSTREAM as REQUIRED_UPSTREAM
from adapters.upstream_schema import agentrun as agentrun
from adapters.upstream_schema import agentrun_event as agentrun_event
from adapters.upstream_schema import be_users as be_users
from adapters.upstream_schema import call_outcome as call_outcome
from adapters.upstream_schema import conversation as conversation
from adapters.upstream_schema import message as message
from adapters.upstream_schema import nrllm_configuration as nrllm_configuration
from adapters.upstream_schema import pages as pages
from adapters.upstream_schema import sys_history as sys_history
from adapters.upstream_schema import tt_content as tt_content
from adapters.upstream_schema import upstream as upstream
from core.table_names import MAX_TABLE_NAME

ours = MetaData()

OUR_PREFIX = "tx_runrecord_"
# Alembic's version table of our tables, beside an installation's own tables with our prefix, the way an
# extension's tables sit (DESIGN.md).
VERSION_TABLE = f"{OUR_PREFIX}alembic_version"


# --- ours -------------------------------------------------------------------------------------------------

write_outcome = Table(
    "tx_runrecord_write_outcome",
    ours,
    uid_column(),
    integer("run_uid"),
    string("correlation_id", 36),
    Column("event_uid", Integer, nullable=False),
    string("tablename", MAX_TABLE_NAME),
    integer("recuid"),
    integer("written_at"),
    string("outcome", 24),
    string("reason", 32),
    string("edit_scope", 16),
    Column("first_change_after_s", Integer, nullable=True),
    string("rule_version", 16),
    integer("derived_at"),
    # A JSON array of the sys_history uids that decided the write (core.outcomes.WriteOutcome.decided_by),
    # sorted; NULL for a write derived before the column existed (migration 0006).
    Column("decided_by", Text, nullable=True),
    UniqueConstraint("event_uid", name="tx_runrecord_write_outcome_event"),
    Index("tx_runrecord_write_outcome_run", "run_uid"),
)

run_outcome = Table(
    "tx_runrecord_run_outcome",
    ours,
    uid_column(),
    Column("run_uid", Integer, nullable=False),
    string("correlation_id", 36),
    string("outcome", 24),
    integer("writes"),
    string("configuration_identifier", 150),
    integer("window_s"),
    string("rule_version", 16),
    integer("derived_at"),
    integer("last_write_at"),  # the run's last tool_write: its window decided when the run was derived
    UniqueConstraint("run_uid", name="tx_runrecord_run_outcome_run"),
)

# The target of every tool_write event (DESIGN.md rule 6), read from its payload in SQL once and kept, so
# that a night reads only the events added since (adapters.write_targets). tablename/recuid are NULL when
# the payload names no target; the name is checked against DOMAIN.md's form and the database's own tables
# when it is used.
write_target = Table(
    "tx_runrecord_write_target",
    ours,
    Column("event_uid", Integer, primary_key=True, autoincrement=False),
    integer("run_uid"),
    integer("written_at"),
    Column("tablename", String(MAX_TABLE_NAME), nullable=True),
    Column("recuid", Integer, nullable=True),
    Index("tx_runrecord_write_target_run", "run_uid", "written_at"),
    Index("tx_runrecord_write_target_record", "tablename", "recuid", "written_at"),
)

# The runs with write targets and no outcome yet, with their last write (DESIGN.md rule 1): what a night
# looks at, instead of every run with writes. A row goes once the run is derived.
pending_run = Table(
    "tx_runrecord_pending_run",
    ours,
    Column("run_uid", Integer, primary_key=True, autoincrement=False),
    integer("last_write_at"),
    integer("writes"),
)

# The runs a night saw not finished (queued, running, waiting): their events may still commit (a run's long
# transaction), so each is read again by run once it has finished, and is not derived before
# (adapters.write_targets). A row goes once its run's events have been read after it finished.
unfinished_run = Table(
    "tx_runrecord_unfinished_run",
    ours,
    Column("run_uid", Integer, primary_key=True, autoincrement=False),
)

# The survival of AI text counted as the writes are derived (core.survival_report's rule; adapters.survival):
# per configuration and distinct time, the writes a human changed then and all the writes ending then; per
# configuration, the runs of its curve, the writes left out and the longest window. Counts only, never a
# time per write.
survival_tally = Table(
    "tx_runrecord_survival_tally",
    ours,
    Column("configuration_identifier", String(150), primary_key=True),
    Column("t", Integer, primary_key=True, autoincrement=False),
    integer("events"),
    integer("writes"),
)
survival_group = Table(
    "tx_runrecord_survival_group",
    ours,
    Column("configuration_identifier", String(150), primary_key=True),
    integer("runs"),
    integer("unknown"),
    integer("undated"),
    integer("window_s"),
)

# How far a table of the installation has been read into one of ours: the highest uid read.
scan_mark = Table(
    "tx_runrecord_scan_mark",
    ours,
    Column("name", String(64), primary_key=True),
    Column("last_uid", BigInteger, nullable=False, server_default="0"),
)

rate = Table(
    "tx_runrecord_rate",
    ours,
    uid_column(),
    string("metric", 64),
    string("grain", 8),
    Column("period_start", Date, nullable=False),
    string("group_kind", 16),
    string("group_value", 150),
    integer("numerator"),
    integer("denominator"),
    integer("excluded"),
    integer("computed_at"),
    # The rule versions of the derived runs the row counts (core.rule_versions); "" for a count of facts.
    string("rule_versions", 255),
    UniqueConstraint(
        "metric", "grain", "period_start", "group_kind", "group_value", name="tx_runrecord_rate_period"
    ),
)

job_run = Table(
    "tx_runrecord_job_run",
    ours,
    uid_column(),
    string("job", 64),
    integer("started"),
    Column("finished", Integer, nullable=True),
    string("status", 16),
    integer("processed"),
    integer("failed"),
    Column("message", Text, nullable=True),
    Column("duration_ms", Integer, nullable=True),  # null while the job runs
    # The process that runs it and its heartbeat, so that a later run can tell a killed one (core.job_runs).
    string("host", 255),
    integer("pid"),
    string("token", 16),
    integer("heartbeat_at"),
    Index("tx_runrecord_job_run_job", "job", "started"),
    Index("tx_runrecord_job_run_status", "status"),
)

release = Table(
    "tx_runrecord_release",
    ours,
    uid_column(),
    Column("released_on", Date, nullable=False),
    string("label", 255),
    integer("crdate"),
    UniqueConstraint("released_on", "label", name="tx_runrecord_release_marker"),
)

# A significant move of a rate, written once per move (core.alerts): the unique key is the move, so a rerun or
# a second measurement at the same time inserts nothing (insert-or-ignore). Group values only, no editor.
alert = Table(
    "tx_runrecord_alert",
    ours,
    uid_column(),
    string("metric", 64),
    string("grain", 8),
    string("group_kind", 16),
    string("group_value", 150),
    string("kind", 16),
    Column("at_date", Date, nullable=False),  # the newest closed period (trend) or the release date (release)
    string("label", 255),  # the labels of the release markers on at_date; "" for a trend
    Column("before_from", Date, nullable=False),
    Column("before_to", Date, nullable=False),
    Column("after_from", Date, nullable=False),
    Column("after_to", Date, nullable=False),
    integer("before_numerator"),
    integer("before_denominator"),
    integer("after_numerator"),
    integer("after_denominator"),
    double("difference"),  # after − before
    double("difference_low"),  # Newcombe's 95% interval of the difference
    double("difference_high"),
    double("p_value"),
    # Benjamini–Hochberg's adjusted p over the comparisons of the measurement that raised it; NULL for an
    # alert written before migration 0011 kept it.
    Column("adjusted_p_value", Float(25).with_variant(mysql.DOUBLE(), "mysql", "mariadb"), nullable=True),
    integer("created_at"),
    string("status", 8, "open"),  # open, closed (acknowledged)
    integer("closed_at"),
    UniqueConstraint(
        "metric", "grain", "group_kind", "group_value", "kind", "at_date", name="tx_runrecord_alert_move"
    ),
    Index("tx_runrecord_alert_status", "status", "created_at"),
)

# Only one scheduler per database runs jobs: it holds the row named "scheduler" until expires_at_ms (epoch
# milliseconds: a lease lasts seconds), renewing it; another takes it over once it has expired.
lease = Table(
    "tx_runrecord_lease",
    ours,
    uid_column(),
    string("name", 64),
    string("holder", 128),
    integer("acquired_at"),
    Column("expires_at_ms", BigInteger, nullable=False, server_default="0"),
    UniqueConstraint("name", name="tx_runrecord_lease_name"),
)

# One row per watch-conversations reading; stuck conversations are counted (their uids are in the message),
# never an editor.
health = Table(
    "tx_runrecord_health",
    ours,
    uid_column(),
    integer("checked_at"),
    string("status", 16),
    integer("stuck_conversations"),
    Column("stuck_since", Integer, nullable=True),
    Column("oldest_history", Integer, nullable=True),
    string("horizon", 16),
    Column("horizon_warning", SmallInteger, nullable=False, server_default="0"),
    integer("window_s"),
    integer("pending_writes"),
    integer("overdue_writes"),
    Column("message", Text, nullable=True),
    Index("tx_runrecord_health_checked", "checked_at"),
)

# APScheduler's job store, created by our migrations exactly as SQLAlchemyJobStore defines it (it skips
# creating a table that exists), so that our tables stay the migrations' alone.
apscheduler_jobs = Table(
    "tx_runrecord_apscheduler_jobs",
    ours,
    Column("id", Unicode(191), primary_key=True),
    # Float(25): an 8-byte float; MariaDB names it DOUBLE, and reflects it so.
    Column("next_run_time", Float(25).with_variant(mysql.DOUBLE(), "mysql", "mariadb"), index=True),
    Column("job_state", LargeBinary, nullable=False),
)

# What measure-rates counted, so that a rerun reads only what changed (jobs/measure.py, core/facts.py): one
# row per run (message_uid 0), and one per answer no run stands behind (run_uid 0: its run is gone, or its
# message cannot be read). Group values and states only; never be_user or an editor id.
measure_fact = Table(
    "tx_runrecord_measure_fact",
    ours,
    uid_column(),
    integer("run_uid"),
    integer("message_uid"),
    integer("conversation_uid"),
    Column("configuration_identifier", String(150), nullable=True),  # NULL: not known (no run)
    Column("skill_identifier", String(100), nullable=True),  # NULL: no conversation names the run
    integer("ended_at"),
    Column("week_start", Date, nullable=False),
    Column("day_start", Date, nullable=False),
    Column("runs", SmallInteger, nullable=False, server_default="0"),
    string("answer", 16),
    Column("notice", SmallInteger, nullable=False, server_default="0"),
    string("claim", 16),
    string("denial", 16),
    string("go_on", 16),
    string("problems", 255),
    integer("measured_at"),
    # The stored "go on" messages sent while this run waited, by what followed them (core.go_on), and the
    # unreadable user messages in their place (migration 0008).
    Column("go_on_finished_outside", SmallInteger, nullable=False, server_default="0"),
    Column("go_on_second_run", SmallInteger, nullable=False, server_default="0"),
    Column("go_on_unknown", SmallInteger, nullable=False, server_default="0"),
    Column("go_on_unreadable", SmallInteger, nullable=False, server_default="0"),
    UniqueConstraint("run_uid", "message_uid", name="tx_runrecord_measure_fact_source"),
    Index("tx_runrecord_measure_fact_conversation", "conversation_uid"),
    Index("tx_runrecord_measure_fact_ended", "ended_at"),
    # The first stored notice (adapters.first_notice) without a walk of every fact in ended_at order
    # (migration 0015).
    Index("tx_runrecord_measure_fact_notice", "notice", "answer", "ended_at"),
    # The days with a fact before the first open period, on MariaDB one index entry a day
    # (adapters.tallies.fact_days_before; migration 0016).
    Index("tx_runrecord_measure_fact_day", "day_start"),
)

# measure-rates' watermarks (the newest tstamp and uid it has read of each source table) and the rule version
# its facts were counted by.
measure_mark = Table(
    "tx_runrecord_measure_mark",
    ours,
    uid_column(),
    string("name", 64),
    Column("value", BigInteger, nullable=False, server_default="0"),
    integer("updated_at"),
    UniqueConstraint("name", name="tx_runrecord_measure_mark_name"),
)
