"""The installation's tables runrecord reads (TYPO3 core, nr-llm, the AI chat), as SQLAlchemy Core `Table`
objects that mirror an installation's own (DOMAIN.md). runrecord creates them only for the demo and for tests
(`init-db --with-upstream`); adapters.schema holds ours beside them.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Index,
    Integer,
    MetaData,
    Numeric,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
)

from adapters.columns import integer, medium_text, string, uid_column

upstream = MetaData()


# --- upstream: TYPO3 core -------------------------------------------------------------------------------

sys_history = Table(
    "sys_history",
    upstream,
    uid_column(),
    integer("tstamp"),
    Column("actiontype", SmallInteger, nullable=False, server_default="0"),
    string("usertype", 2, "BE"),
    Column("userid", Integer, nullable=True),
    Column("originaluserid", Integer, nullable=True),
    integer("recuid"),
    string("tablename", 255),
    Column("history_data", medium_text(), nullable=True),
    Column("workspace", Integer, nullable=True, server_default="0"),
    string("correlation_id", 255),
    Index("recordident_1", "tablename", "recuid"),
    Index("recordident_2", "tablename", "tstamp"),
)

# TYPO3 core's backend users, with the columns it always has (upstream-schema/installation.sqlite.sql beside
# DOMAIN.md). runrecord reads uid and username only, inside SQL, to know the `_cli_` user (scheduler tasks
# and CLI commands): DESIGN.md rule 4; nothing of it is ever selected.
be_users = Table(
    "be_users",
    upstream,
    uid_column(),
    integer("pid"),
    integer("tstamp"),
    integer("crdate"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    Column("disable", SmallInteger, nullable=False, server_default="0"),
    string("username", 50),
    string("password", 100),
    Column("admin", SmallInteger, nullable=False, server_default="0"),
    Column("usergroup", Text, nullable=True),
    string("realName", 80),
    string("email", 255),
    string("lang", 10, "default"),
    integer("workspace_id"),
    Index("be_users_username", "username"),
)

pages = Table(
    "pages",
    upstream,
    uid_column(),
    integer("pid"),
    integer("tstamp"),
    integer("crdate"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    Column("hidden", SmallInteger, nullable=False, server_default="0"),
    string("title", 255),
    string("seo_title", 255),
    Column("description", Text, nullable=True),
    string("og_title", 255),
    Column("og_description", Text, nullable=True),
    integer("og_image"),
    string("twitter_title", 255),
    Column("twitter_description", Text, nullable=True),
)

tt_content = Table(
    "tt_content",
    upstream,
    uid_column(),
    integer("pid"),
    integer("tstamp"),
    integer("crdate"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    Column("hidden", SmallInteger, nullable=False, server_default="0"),
    integer("sorting"),
    string("CType", 255),
    string("header", 255),
    Column("bodytext", medium_text(), nullable=True),
)

# --- upstream: nr-llm -------------------------------------------------------------------------------------

nrllm_configuration = Table(
    "tx_nrllm_configuration",
    upstream,
    uid_column(),
    integer("pid"),
    string("identifier", 100),
    string("name", 255),
    Column("description", Text, nullable=True),
    integer("model_uid"),
    string("model_selection_mode", 20, "fixed"),
    Column("model_selection_criteria", Text, nullable=True),
    string("translator", 50),
    Column("system_prompt", medium_text(), nullable=True),
    string("system_prompt_data_class", 32),
    Column("temperature", Numeric(3, 2), nullable=False, server_default="0.70"),
    integer("max_tokens", 1000),
    Column("top_p", Numeric(3, 2), nullable=False, server_default="1.00"),
    Column("frequency_penalty", Numeric(3, 2), nullable=False, server_default="0.00"),
    Column("presence_penalty", Numeric(3, 2), nullable=False, server_default="0.00"),
    integer("timeout"),
    Column("options", Text, nullable=True),
    integer("max_requests_per_day"),
    integer("max_tokens_per_day"),
    Column("max_cost_per_day", Numeric(10, 2), nullable=False, server_default="0.00"),
    Column("fallback_chain", Text, nullable=True),
    string("preset_checksum", 64),
    Column("is_active", SmallInteger, nullable=False, server_default="1"),
    Column("is_default", SmallInteger, nullable=False, server_default="0"),
    integer("allowed_groups"),
    Column("require_second_approver", SmallInteger, nullable=False, server_default="0"),
    string("allowed_tool_groups", 255),
    string("allowed_guardrails", 255),
    string("snippet_tags", 255),
    integer("skills"),
    integer("tstamp"),
    integer("crdate"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    Column("hidden", SmallInteger, nullable=False, server_default="0"),
    integer("sorting"),
)

agentrun = Table(
    "tx_nrllm_agentrun",
    upstream,
    uid_column(),
    integer("pid"),
    string("uuid", 36),
    string("status", 32, "queued"),
    integer("configuration_uid"),
    string("configuration_identifier", 150),
    # be_user exists upstream and is never selected by runrecord (DESIGN.md, "Privacy").
    integer("be_user"),
    integer("iterations"),
    Column("truncated", SmallInteger, nullable=False, server_default="0"),
    integer("total_prompt_tokens"),
    integer("total_completion_tokens"),
    integer("total_tokens"),
    Column("estimated_cost", Numeric(10, 6), nullable=False, server_default="0.000000"),
    string("error_class", 255),
    string("termination_reason", 32),
    Column("suspended_state", medium_text(), nullable=True),
    Column("queued_request", medium_text(), nullable=True),
    string("claimed_by", 64),
    integer("lease_expires"),
    integer("requeue_count"),
    string("pending_effect", 32),
    integer("started_at"),
    integer("finished_at"),
    integer("tstamp"),
    integer("crdate"),
    Index("run_uuid", "uuid"),
    # nr-llm's KEY status_lookup: a night reads the runs not finished yet through it (adapters.write_targets).
    Index("status_lookup", "status", "crdate"),
    # nr-llm's other keys (KEY parent, be_user, crdate), named as the installation's SQLite schema names them:
    # every statement is planned beside them, as on an installation (and none reads be_user).
    Index("agentrun_parent", "pid"),
    Index("agentrun_be_user", "be_user", "crdate"),
    Index("agentrun_crdate", "crdate"),
)

agentrun_event = Table(
    "tx_nrllm_agentrun_event",
    upstream,
    uid_column(),
    integer("pid"),
    integer("run"),
    integer("sequence"),
    string("kind", 32),
    integer("round"),
    Column("duration_ms", Numeric(10, 2), nullable=False, server_default="0.00"),
    Column("payload", medium_text(), nullable=True),
    integer("crdate"),
    Index("run_sequence", "run", "sequence"),
    Index("agentrun_event_parent", "pid"),
    Index("agentrun_event_crdate", "crdate"),
)

call_outcome = Table(
    "tx_nrllm_call_outcome",
    upstream,
    uid_column(),
    integer("pid"),
    string("correlation_id", 36),
    string("outcome", 24),
    integer("crdate"),
    integer("tstamp"),
    # nr-llm's KEY correlation and KEY outcome_lookup, there since the table was created (its ext_tables.sql;
    # DOMAIN.md): the mirror looks a run's observed row up by correlation_id (adapters.derive_batch._mirror).
    Index("correlation", "correlation_id"),
    Index("outcome_lookup", "outcome", "crdate"),
    Index("call_outcome_parent", "pid"),
)

# --- upstream: the AI chat (nr-mcp-agent) -----------------------------------------------------------------

conversation = Table(
    "tx_nrmcpagent_conversation",
    upstream,
    uid_column(),
    integer("pid"),
    Column("deleted", SmallInteger, nullable=False, server_default="0"),
    # be_user exists upstream and is never selected by runrecord (DESIGN.md, "Privacy").
    integer("be_user"),
    string("title", 255),
    Column("messages", medium_text(), nullable=True),
    integer("message_count"),
    string("status", 20, "idle"),
    string("current_request_id", 64),
    Column("system_prompt", Text, nullable=True),
    string("view_context", 255),
    string("skill_identifier", 100),
    Column("activity", Text, nullable=True),
    Column("archived", SmallInteger, nullable=False, server_default="0"),
    Column("pinned", SmallInteger, nullable=False, server_default="0"),
    Column("error_message", Text, nullable=True),
    string("error_code", 32),
    string("approval_run_uuid", 64),
    string("approval_decision", 8),
    string("approval_turn_digest", 64),
    Column("run_record", medium_text(), nullable=True),
    Column("card_outcomes", medium_text(), nullable=True),
    integer("tstamp"),
    integer("crdate"),
    # The chat's keys (its ext_tables.sql: be_user_archived, status_deleted_tstamp, be_user_status,
    # current_request_id).
    Index("conversation_be_user_archived", "be_user", "archived", "tstamp"),
    Index("conversation_status_deleted_tstamp", "status", "deleted", "tstamp"),
    Index("conversation_be_user_status", "be_user", "status", "deleted"),
    Index("conversation_current_request_id", "current_request_id", "status"),
)

message = Table(
    "tx_nrmcpagent_message",
    upstream,
    uid_column(),
    integer("pid"),
    integer("conversation"),
    integer("sorting"),
    string("role", 20),
    Column("payload", medium_text(), nullable=True),
    integer("crdate"),
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
