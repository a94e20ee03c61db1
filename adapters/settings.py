"""The settings registry: every option runrecord reads, with its default and help text.

Read once at the edge (the command line); core receives plain arguments. A test checks that the README
documents every setting listed here. A numeric setting is read through its reader below (`window_days`,
`dashboard_port`, …), never with int() on `get`: a malformed value is one RunrecordError naming the variable
and its value.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from adapters.errors import RunrecordError
from core.time import DAY_S
from core.window import MAX_WINDOW_DAYS

DEMO_DATABASE = Path("data") / "demo.sqlite"
MIN_LEASE_S = 3  # renewed every third of it: a shorter lease would be renewed more than once a second
# A day: a scheduler that died holding a longer lease would keep every other one waiting for longer (and the
# lease's end is stored as a number of seconds a database column holds).
MAX_LEASE_S = 86_400
MAX_MISFIRE_GRACE_S = 7 * 86_400  # a run missed by more than a week is no nightly run any more
# A skill identifier as tx_nrmcpagent_conversation.skill_identifier (varchar(100)) holds one.
_SKILL_IDENTIFIER = re.compile(r"[A-Za-z0-9_.:-]{1,100}")


@dataclass(frozen=True)
class Setting:
    name: str
    env: str
    default: str
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "db",
        "RUNRECORD_DB",
        f"sqlite:///{DEMO_DATABASE.as_posix()}",
        "SQLAlchemy URL of the installation's database (sqlite, mysql+pymysql, postgresql+psycopg); "
        "a relative SQLite path is taken from the working directory; a SQLite URL takes no query arguments.",
    ),
    Setting(
        "window_days",
        "RUNRECORD_WINDOW_DAYS",
        "7",
        "Days after an AI write during which human changes count (ADR-185, 'A window'); at least 1.",
    ),
    Setting(
        "dashboard_port",
        "RUNRECORD_DASHBOARD_PORT",
        "8501",
        "Port of the dashboard on localhost.",
    ),
    Setting(
        "derive_cron",
        "RUNRECORD_DERIVE_CRON",
        "30 2 * * *",
        "When the scheduler runs derive-outcomes: a crontab expression (minute hour day month weekday; "
        "weekday 0 or 7 is Sunday) in the scheduler's time zone. Any job's expression restricts the day "
        "of the month or the weekday, not both (crontab runs such an expression on either day).",
    ),
    Setting(
        "measure_cron",
        "RUNRECORD_MEASURE_CRON",
        "after derive-outcomes",
        "When the scheduler runs measure-rates: right after derive-outcomes has finished without an "
        "error, or a crontab expression of its own.",
    ),
    Setting(
        "watch_cron",
        "RUNRECORD_WATCH_CRON",
        "*/5 * * * *",
        "When the scheduler runs watch-conversations: a crontab expression.",
    ),
    Setting(
        "scheduler_timezone",
        "RUNRECORD_SCHEDULER_TIMEZONE",
        "UTC",
        "IANA time zone of the crontab expressions (e.g. Europe/Berlin).",
    ),
    Setting(
        "misfire_grace_s",
        "RUNRECORD_MISFIRE_GRACE_SECONDS",
        "3600",
        "A run the scheduler missed (it was stopped or waiting for the lease) still starts up to this many "
        "seconds late; later than that it is skipped. Missed runs of a job are coalesced into one.",
    ),
    Setting(
        "lease_s",
        "RUNRECORD_SCHEDULER_LEASE_SECONDS",
        "60",
        "Only one scheduler per database runs jobs: it renews its lease every third of this; another "
        "scheduler waits and takes over once the lease has expired. At least 3.",
    ),
    Setting(
        "admin_password_hash",
        "RUNRECORD_ADMIN_PASSWORD_HASH",
        "",
        "Without OIDC sign-in: the hash of the dashboard's administrator password, as "
        "`runrecord hash-password` prints it (pbkdf2_sha256$iterations$salt$hash), never the password "
        "itself. Unset: `runrecord dashboard` and `runrecord demo` make one for that start and print it.",
    ),
    Setting(
        "admin_emails",
        "RUNRECORD_ADMIN_EMAILS",
        "",
        "With OIDC sign-in (an [auth] section in .streamlit/secrets.toml): the e-mail addresses, "
        "comma-separated, that see the administrator pages; everyone else who signs in sees Rates and Runs.",
    ),
    Setting(
        "admin_session_minutes",
        "RUNRECORD_ADMIN_SESSION_MINUTES",
        "60",
        "Without OIDC sign-in: how long an administrator sign-in lasts, across reloads and tabs of the same "
        "browser, in minutes; from 1 to 10080 (a week). Signing out ends it at once.",
    ),
    Setting(
        "admin_session_secret",
        "RUNRECORD_ADMIN_SESSION_SECRET",
        "",
        "Without OIDC sign-in: the server-side key (at least 32 characters) the dashboard signs its "
        "administrator sign-ins with. Unset: each start of the dashboard makes one, so a restart signs "
        "every administrator out.",
    ),
    Setting(
        "own_transcript_skills",
        "RUNRECORD_OWN_TRANSCRIPT_SKILLS",
        "missing_alt_text",
        "The skill identifiers, comma-separated, of conversations that replace the transcript with their own "
        "(the missing alt text of ADR-026): they get no notes, since their transcript confirms the write "
        "already (ADR-030, 'Consequences').",
    ),
    Setting(
        "alert_webhook",
        "RUNRECORD_ALERT_WEBHOOK",
        "",
        "An http(s) URL: every alert a measurement writes is POSTed there as JSON (timeout 5 s, 3 tries). A "
        "failed delivery is noted in the job run's message and never fails the measurement. Unset: no POST.",
    ),
    Setting(
        "reader_language",
        "RUNRECORD_READER_LANGUAGE",
        "de",
        "The language (de or en) the Conversation page first renders notices, card outcomes and errors in, "
        "as the chat's reader would read them; the page has a choice, kept in its URL (?language=).",
    ),
    Setting(
        "now",
        "RUNRECORD_NOW",
        "",
        "Fixes runrecord's clock at this ISO 8601 instant (UTC when it has no offset): the jobs' default "
        "--now, the dashboard's open week and windows, sign-in expiry and the job log all read it, so a "
        "test or a re-measurement sees the same calendar at any hour. Unset: the system clock. The "
        "scheduler still fires its jobs by the system clock.",
    ),
)

_BY_NAME = {setting.name: setting for setting in SETTINGS}


def get(name: str) -> str:
    """The value of a setting: its environment variable when set and not empty, else its default."""
    setting = _BY_NAME[name]
    value = os.environ.get(setting.env) or setting.default
    if not is_utf8(value):  # not shown: RUNRECORD_DB holds a password
        raise RunrecordError(f"{setting.env} is not UTF-8 text")
    return value


def is_utf8(text: str) -> bool:
    """Whether text came from UTF-8 bytes: Python hands on the bytes of an environment variable, an argument
    or stdin that are not UTF-8 as lone surrogates, which a database, a hash or a JSON document cannot
    encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def variable(name: str) -> str:
    """The environment variable of a setting."""
    return _BY_NAME[name].env


def whole_number(name: str, *, what: str, minimum: int, maximum: int | None = None) -> int:
    """A setting that is a whole number from `minimum` (to `maximum`); RunrecordError naming the variable and
    its value when it is not one (`what` it should be: "a whole number of days")."""
    text = get(name)
    digits = text.strip()
    number = int(digits) if digits.isascii() and digits.isdigit() else None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        bounds = f"at least {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        raise RunrecordError(f"{variable(name)}={text!r} is not {what}, {bounds}")
    return number


def window_days() -> int:
    """RUNRECORD_WINDOW_DAYS: days after an AI write during which human changes count; at least 1."""
    return whole_number("window_days", what="a whole number of days", minimum=1, maximum=MAX_WINDOW_DAYS)


def window_seconds() -> int:
    """RUNRECORD_WINDOW_DAYS in seconds."""
    return window_days() * DAY_S


def dashboard_port() -> int:
    """RUNRECORD_DASHBOARD_PORT: a TCP port, 1 to 65535."""
    return whole_number("dashboard_port", what="a port number", minimum=1, maximum=65_535)


def misfire_grace_seconds() -> int:
    """RUNRECORD_MISFIRE_GRACE_SECONDS: 1 to MAX_MISFIRE_GRACE_S."""
    return whole_number(
        "misfire_grace_s", what="a whole number of seconds", minimum=1, maximum=MAX_MISFIRE_GRACE_S
    )


def lease_seconds() -> int:
    """RUNRECORD_SCHEDULER_LEASE_SECONDS: MIN_LEASE_S to MAX_LEASE_S."""
    return whole_number("lease_s", what="a whole number of seconds", minimum=MIN_LEASE_S, maximum=MAX_LEASE_S)


def own_transcript_skills() -> frozenset[str]:
    """RUNRECORD_OWN_TRANSCRIPT_SKILLS: skill identifiers, comma-separated; RunrecordError naming the variable
    and its value when one is not an identifier."""
    text = get("own_transcript_skills")
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names or not all(_SKILL_IDENTIFIER.fullmatch(name) for name in names):
        raise RunrecordError(
            f"{variable('own_transcript_skills')}={text!r} is not a comma-separated list of skill "
            "identifiers (letters, digits, _ . : -, at most 100 characters each)"
        )
    return frozenset(names)


def alert_webhook() -> str | None:
    """RUNRECORD_ALERT_WEBHOOK: an http or https URL with a host, or None when unset; RunrecordError naming
    the variable (not its value: a webhook URL may carry a token) when it is not one."""
    text = get("alert_webhook").strip()
    if not text:
        return None
    if not _http_url(text):
        raise RunrecordError(
            f"{variable('alert_webhook')} is not an http(s) URL: it needs http:// or https:// and a host "
            "(its value is not repeated here, since a webhook URL may carry a token)"
        )
    return text


def _http_url(text: str) -> bool:
    try:
        parts = urlsplit(text)
        _ = parts.port  # a port that is not a number from 0 to 65535 raises ValueError here
    except ValueError:
        return False
    return (
        parts.scheme.lower() in ("http", "https")
        and bool(parts.hostname)
        and text.isprintable()
        and not any(character.isspace() for character in text)
    )


# RFC 2104, section 3: a key shorter than the hash's output (32 bytes for SHA-256) is strongly discouraged.
MIN_SESSION_SECRET_CHARS = 32


def admin_session_minutes() -> int:
    """RUNRECORD_ADMIN_SESSION_MINUTES: 1 to 10080 (a week)."""
    return whole_number("admin_session_minutes", what="a whole number of minutes", minimum=1, maximum=10_080)


def admin_session_secret() -> str | None:
    """RUNRECORD_ADMIN_SESSION_SECRET, or None when unset; RunrecordError naming the variable (not its value,
    which is a key) when it is shorter than MIN_SESSION_SECRET_CHARS."""
    text = get("admin_session_secret").strip()
    if not text:
        return None
    if len(text) < MIN_SESSION_SECRET_CHARS:
        raise RunrecordError(
            f"{variable('admin_session_secret')} is too short: at least {MIN_SESSION_SECRET_CHARS} "
            "characters (its value is not repeated here, since it is a key)"
        )
    return text
