"""The tables runrecord reads and writes, as SQLAlchemy Core `Table` objects.

Upstream tables mirror an installation's own (TYPO3 core, nr-llm, the AI chat; see DOMAIN.md): runrecord
reads them and creates them only for the demo and for tests (`init-db --with-upstream`). Our own tables
carry the prefix `tx_runrecord_` and are created and upgraded by the Alembic migrations in jobs/migrations,
which must stay in step with the definitions here (a test compares them).

The rule modules of core/ never import SQLAlchemy; every table they are counted over is declared here.
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
    Numeric,
    SmallInteger,
    String,
    Table,
    Text,
    Unicode,
    UniqueConstraint,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.types import TypeEngine

from core.table_names import MAX_TABLE_NAME

upstream = MetaData()
ours = MetaData()

OUR_PREFIX = "tx_runrecord_"
# Alembic's version table of our tables, beside an installation's own tables with our prefix, the way an
# extension's tables sit (DESIGN.md).
VERSION_TABLE = f"{OUR_PREFIX}alembic_version"


def _medium_text() -> TypeEngine[str]:
    """TYPO3's mediumtext: TEXT elsewhere, MEDIUMTEXT on MariaDB/MySQL (TEXT stops at 64 KiB there)."""
    return Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")


def _int(name: str, default: int = 0) -> Column[int]:
    return Column(name, Integer, nullable=False, server_default=str(default))


def _str(name: str, length: int, default: str = "") -> Column[str]:
    return Column(name, String(length), nullable=False, server_default=default)


def _double(name: str) -> Column[float]:
    """An 8-byte float: DOUBLE PRECISION on PostgreSQL, DOUBLE on MariaDB (which reflects it so)."""
    return Column(name, Float(25).with_variant(mysql.DOUBLE(), "mysql", "mariadb"), nullable=False)


def _uid() -> Column[int]:
    return Column("uid", Integer, primary_key=True, autoincrement=True)


# --- upstream: TYPO3 core -------------------------------------------------------------------------------

sys_history = Table(
    "sys_history",
    upstream,
    _uid(),
    _int("tstamp"),
    Column("actiontype", SmallInteger, nullable=False, server_default="0"),
    _str("usertype", 2, "BE"),
    Column("userid", Integer, nullable=True),
    Column("originaluserid", Integer, nullable=True),
    _int("recuid"),
    _str("tablename", 255),
    Column("history_data", _medium_text(), nullable=True),
    Column("workspace", Integer, nullable=True, server_default="0"),
    _str("correlation_id", 255),
    Index("recordident_1", "tablename", "recuid"),
    Index("recordident_2", "tablename", "tstamp"),
)

# TYPO3 core's backend users, with the columns it always has (upstream-schema/installation.sqlite.sql beside
# DOMAIN.md). runrecord reads uid and username only, inside SQL, to know the `_cli_` user (scheduler tasks
# and CLI commands): DESIGN.md rule 4; nothing of it is ever selected.
be_users = Table(
    "be_users",
    upstream,
    _uid(),
    _int("pid"),
    _int("tstamp"),
    _int("crdate"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    Column("disable", SmallInteger, nullable=False, server_default="0"),
    _str("username", 50),
    _str("password", 100),
    Column("admin", SmallInteger, nullable=False, server_default="0"),
    Column("usergroup", Text, nullable=True),
    _str("realName", 80),
    _str("email", 255),
    _str("lang", 10, "default"),
    _int("workspace_id"),
    Index("be_users_username", "username"),
)

pages = Table(
    "pages",
    upstream,
    _uid(),
    _int("pid"),
    _int("tstamp"),
    _int("crdate"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    Column("hidden", SmallInteger, nullable=False, server_default="0"),
    _str("title", 255),
    _str("seo_title", 255),
    Column("description", Text, nullable=True),
    _str("og_title", 255),
    Column("og_description", Text, nullable=True),
    _int("og_image"),
    _str("twitter_title", 255),
    Column("twitter_description", Text, nullable=True),
)

tt_content = Table(
    "tt_content",
    upstream,
    _uid(),
    _int("pid"),
    _int("tstamp"),
    _int("crdate"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    Column("hidden", SmallInteger, nullable=False, server_default="0"),
    _int("sorting"),
    _str("CType", 255),
    _str("header", 255),
    Column("bodytext", _medium_text(), nullable=True),
)

# --- upstream: nr-llm -------------------------------------------------------------------------------------

nrllm_configuration = Table(
    "tx_nrllm_configuration",
    upstream,
    _uid(),
    _int("pid"),
    _str("identifier", 100),
    _str("name", 255),
    Column("description", Text, nullable=True),
    _int("model_uid"),
    _str("model_selection_mode", 20, "fixed"),
    Column("model_selection_criteria", Text, nullable=True),
    _str("translator", 50),
    Column("system_prompt", _medium_text(), nullable=True),
    _str("system_prompt_data_class", 32),
    Column("temperature", Numeric(3, 2), nullable=False, server_default="0.70"),
    _int("max_tokens", 1000),
    Column("top_p", Numeric(3, 2), nullable=False, server_default="1.00"),
    Column("frequency_penalty", Numeric(3, 2), nullable=False, server_default="0.00"),
    Column("presence_penalty", Numeric(3, 2), nullable=False, server_default="0.00"),
    _int("timeout"),
    Column("options", Text, nullable=True),
    _int("max_requests_per_day"),
    _int("max_tokens_per_day"),
    Column("max_cost_per_day", Numeric(10, 2), nullable=False, server_default="0.00"),
    Column("fallback_chain", Text, nullable=True),
    _str("preset_checksum", 64),
    Column("is_active", SmallInteger, nullable=False, server_default="1"),
    Column("is_default", SmallInteger, nullable=False, server_default="0"),
    _int("allowed_groups"),
    Column("require_second_approver", SmallInteger, nullable=False, server_default="0"),
    _str("allowed_tool_groups", 255),
    _str("allowed_guardrails", 255),
    _str("snippet_tags", 255),
    _int("skills"),
    _int("tstamp"),
    _int("crdate"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    Column("hidden", SmallInteger, nullable=False, server_default="0"),
    _int("sorting"),
)

agentrun = Table(
    "tx_nrllm_agentrun",
    upstream,
    _uid(),
    _int("pid"),
    _str("uuid", 36),
    _str("status", 32, "queued"),
    _int("configuration_uid"),
    _str("configuration_identifier", 150),
    # be_user exists upstream and is never selected by runrecord (DESIGN.md, "Privacy").
    _int("be_user"),
    _int("iterations"),
    Column("truncated", SmallInteger, nullable=False, server_default="0"),
    _int("total_prompt_tokens"),
    _int("total_completion_tokens"),
    _int("total_tokens"),
    Column("estimated_cost", Numeric(10, 6), nullable=False, server_default="0.000000"),
    _str("error_class", 255),
    _str("termination_reason", 32),
    Column("suspended_state", _medium_text(), nullable=True),
    Column("queued_request", _medium_text(), nullable=True),
    _str("claimed_by", 64),
    _int("lease_expires"),
    _int("requeue_count"),
    _str("pending_effect", 32),
    _int("started_at"),
    _int("finished_at"),
    _int("tstamp"),
    _int("crdate"),
    Index("run_uuid", "uuid"),
    # nr-llm's KEY status_lookup: a night reads the runs not finished yet through it (adapters.write_targets).
    Index("status_lookup", "status", "crdate"),
)

agentrun_event = Table(
    "tx_nrllm_agentrun_event",
    upstream,
    _uid(),
    _int("pid"),
    _int("run"),
    _int("sequence"),
    _str("kind", 32),
    _int("round"),
    Column("duration_ms", Numeric(10, 2), nullable=False, server_default="0.00"),
    Column("payload", _medium_text(), nullable=True),
    _int("crdate"),
    Index("run_sequence", "run", "sequence"),
)

call_outcome = Table(
    "tx_nrllm_call_outcome",
    upstream,
    _uid(),
    _int("pid"),
    _str("correlation_id", 36),
    _str("outcome", 24),
    _int("crdate"),
    _int("tstamp"),
    # nr-llm's KEY correlation and KEY outcome_lookup, there since the table was created (its ext_tables.sql;
    # DOMAIN.md): the mirror looks a run's observed row up by correlation_id (adapters.derive_batch._mirror).
    Index("correlation", "correlation_id"),
    Index("outcome_lookup", "outcome", "crdate"),
)

# --- upstream: the AI chat (nr-mcp-agent) -----------------------------------------------------------------

conversation = Table(
    "tx_nrmcpagent_conversation",
    upstream,
    _uid(),
    _int("pid"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    # be_user exists upstream and is never selected by runrecord (DESIGN.md, "Privacy").
    _int("be_user"),
    _str("title", 255),
    Column("messages", _medium_text(), nullable=True),
    _int("message_count"),
    _str("status", 20, "idle"),
    _str("current_request_id", 64),
    Column("system_prompt", Text, nullable=True),
    _str("view_context", 255),
    _str("skill_identifier", 100),
    Column("activity", Text, nullable=True),
    Column("archived", SmallInteger, nullable=False, server_default="0"),
    Column("pinned", SmallInteger, nullable=False, server_default="0"),
    Column("error_message", Text, nullable=True),
    _str("error_code", 32),
    _str("approval_run_uuid", 64),
    _str("approval_decision", 8),
    _str("approval_turn_digest", 64),
    Column("run_record", _medium_text(), nullable=True),
    Column("card_outcomes", _medium_text(), nullable=True),
    _int("tstamp"),
    _int("crdate"),
)

message = Table(
    "tx_nrmcpagent_message",
    upstream,
    _uid(),
    _int("pid"),
    _int("conversation"),
    _int("sorting"),
    _str("role", 20),
    Column("payload", _medium_text(), nullable=True),
    _int("crdate"),
    UniqueConstraint("conversation", "sorting", name="conversation_sorting"),
)

# Tables every installation with nr-llm and the AI chat has; init-db refuses a database that lacks one.
REQUIRED_UPSTREAM = (
    "sys_history",
    "tx_nrllm_agentrun",
    "tx_nrllm_agentrun_event",
    "tx_nrllm_call_outcome",
    "tx_nrmcpagent_conversation",
    "tx_nrmcpagent_message",
)

# --- ours -------------------------------------------------------------------------------------------------

write_outcome = Table(
    "tx_runrecord_write_outcome",
    ours,
    _uid(),
    _int("run_uid"),
    _str("correlation_id", 36),
    Column("event_uid", Integer, nullable=False),
    _str("tablename", MAX_TABLE_NAME),
    _int("recuid"),
    _int("written_at"),
    _str("outcome", 24),
    _str("reason", 32),
    _str("edit_scope", 16),
    Column("first_change_after_s", Integer, nullable=True),
    _str("rule_version", 16),
    _int("derived_at"),
    # A JSON array of the sys_history uids that decided the write (core.outcomes.WriteOutcome.decided_by),
    # sorted; NULL for a write derived before the column existed (migration 0006).
    Column("decided_by", Text, nullable=True),
    UniqueConstraint("event_uid", name="tx_runrecord_write_outcome_event"),
    Index("tx_runrecord_write_outcome_run", "run_uid"),
)

run_outcome = Table(
    "tx_runrecord_run_outcome",
    ours,
    _uid(),
    Column("run_uid", Integer, nullable=False),
    _str("correlation_id", 36),
    _str("outcome", 24),
    _int("writes"),
    _str("configuration_identifier", 150),
    _int("window_s"),
    _str("rule_version", 16),
    _int("derived_at"),
    _int("last_write_at"),  # the run's last tool_write: its window decided when the run was derived
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
    _int("run_uid"),
    _int("written_at"),
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
    _int("last_write_at"),
    _int("writes"),
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
    _int("events"),
    _int("writes"),
)
survival_group = Table(
    "tx_runrecord_survival_group",
    ours,
    Column("configuration_identifier", String(150), primary_key=True),
    _int("runs"),
    _int("unknown"),
    _int("undated"),
    _int("window_s"),
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
    _uid(),
    _str("metric", 64),
    _str("grain", 8),
    Column("period_start", Date, nullable=False),
    _str("group_kind", 16),
    _str("group_value", 150),
    _int("numerator"),
    _int("denominator"),
    _int("excluded"),
    _int("computed_at"),
    # The rule versions of the derived runs the row counts (core.rule_versions); "" for a count of facts.
    _str("rule_versions", 255),
    UniqueConstraint(
        "metric", "grain", "period_start", "group_kind", "group_value", name="tx_runrecord_rate_period"
    ),
)

job_run = Table(
    "tx_runrecord_job_run",
    ours,
    _uid(),
    _str("job", 64),
    _int("started"),
    Column("finished", Integer, nullable=True),
    _str("status", 16),
    _int("processed"),
    _int("failed"),
    Column("message", Text, nullable=True),
    Column("duration_ms", Integer, nullable=True),  # null while the job runs
    # The process that runs it and its heartbeat, so that a later run can tell a killed one (core.job_runs).
    _str("host", 255),
    _int("pid"),
    _str("token", 16),
    _int("heartbeat_at"),
    Index("tx_runrecord_job_run_job", "job", "started"),
    Index("tx_runrecord_job_run_status", "status"),
)

release = Table(
    "tx_runrecord_release",
    ours,
    _uid(),
    Column("released_on", Date, nullable=False),
    _str("label", 255),
    _int("crdate"),
    UniqueConstraint("released_on", "label", name="tx_runrecord_release_marker"),
)

# A significant move of a rate, written once per move (core.alerts): the unique key is the move, so a rerun or
# a second measurement at the same time inserts nothing (insert-or-ignore). Group values only, no editor.
alert = Table(
    "tx_runrecord_alert",
    ours,
    _uid(),
    _str("metric", 64),
    _str("grain", 8),
    _str("group_kind", 16),
    _str("group_value", 150),
    _str("kind", 16),
    Column("at_date", Date, nullable=False),  # the newest closed period (trend) or the release date (release)
    _str("label", 255),  # the labels of the release markers on at_date; "" for a trend
    Column("before_from", Date, nullable=False),
    Column("before_to", Date, nullable=False),
    Column("after_from", Date, nullable=False),
    Column("after_to", Date, nullable=False),
    _int("before_numerator"),
    _int("before_denominator"),
    _int("after_numerator"),
    _int("after_denominator"),
    _double("difference"),  # after − before
    _double("difference_low"),  # Newcombe's 95% interval of the difference
    _double("difference_high"),
    _double("p_value"),
    # Benjamini–Hochberg's adjusted p over the comparisons of the measurement that raised it; NULL for an
    # alert written before migration 0011 kept it.
    Column("adjusted_p_value", Float(25).with_variant(mysql.DOUBLE(), "mysql", "mariadb"), nullable=True),
    _int("created_at"),
    _str("status", 8, "open"),  # open, closed (acknowledged)
    _int("closed_at"),
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
    _uid(),
    _str("name", 64),
    _str("holder", 128),
    _int("acquired_at"),
    Column("expires_at_ms", BigInteger, nullable=False, server_default="0"),
    UniqueConstraint("name", name="tx_runrecord_lease_name"),
)

# One row per watch-conversations reading; stuck conversations are counted (their uids are in the message),
# never an editor.
health = Table(
    "tx_runrecord_health",
    ours,
    _uid(),
    _int("checked_at"),
    _str("status", 16),
    _int("stuck_conversations"),
    Column("stuck_since", Integer, nullable=True),
    Column("oldest_history", Integer, nullable=True),
    _str("horizon", 16),
    Column("horizon_warning", SmallInteger, nullable=False, server_default="0"),
    _int("window_s"),
    _int("pending_writes"),
    _int("overdue_writes"),
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
    _uid(),
    _int("run_uid"),
    _int("message_uid"),
    _int("conversation_uid"),
    Column("configuration_identifier", String(150), nullable=True),  # NULL: not known (no run)
    Column("skill_identifier", String(100), nullable=True),  # NULL: no conversation names the run
    _int("ended_at"),
    Column("week_start", Date, nullable=False),
    Column("day_start", Date, nullable=False),
    Column("runs", SmallInteger, nullable=False, server_default="0"),
    _str("answer", 16),
    Column("notice", SmallInteger, nullable=False, server_default="0"),
    _str("claim", 16),
    _str("denial", 16),
    _str("go_on", 16),
    _str("problems", 255),
    _int("measured_at"),
    # The stored "go on" messages sent while this run waited, by what followed them (core.go_on), and the
    # unreadable user messages in their place (migration 0008).
    Column("go_on_finished_outside", SmallInteger, nullable=False, server_default="0"),
    Column("go_on_second_run", SmallInteger, nullable=False, server_default="0"),
    Column("go_on_unknown", SmallInteger, nullable=False, server_default="0"),
    Column("go_on_unreadable", SmallInteger, nullable=False, server_default="0"),
    UniqueConstraint("run_uid", "message_uid", name="tx_runrecord_measure_fact_source"),
    Index("tx_runrecord_measure_fact_conversation", "conversation_uid"),
    Index("tx_runrecord_measure_fact_ended", "ended_at"),
)

# measure-rates' watermarks (the newest tstamp and uid it has read of each source table) and the rule version
# its facts were counted by.
measure_mark = Table(
    "tx_runrecord_measure_mark",
    ours,
    _uid(),
    _str("name", 64),
    Column("value", BigInteger, nullable=False, server_default="0"),
    _int("updated_at"),
    UniqueConstraint("name", name="tx_runrecord_measure_mark_name"),
)
