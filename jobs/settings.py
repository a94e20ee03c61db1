"""The settings registry: every option runrecord reads, with its default and help text.

Read once at the edge (the command line); core receives plain arguments. A test checks that the README
documents every setting listed here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEMO_DATABASE = Path("data") / "demo.sqlite"


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
        "a relative SQLite path is taken from the working directory.",
    ),
    Setting(
        "window_days",
        "RUNRECORD_WINDOW_DAYS",
        "7",
        "Days after an AI write during which human changes count (003_…, 'A window'); at least 1.",
    ),
    Setting(
        "dashboard_port",
        "RUNRECORD_DASHBOARD_PORT",
        "8501",
        "Port of the dashboard on localhost.",
    ),
)

_BY_NAME = {setting.name: setting for setting in SETTINGS}


def get(name: str) -> str:
    """The value of a setting: its environment variable when set and not empty, else its default."""
    setting = _BY_NAME[name]
    return os.environ.get(setting.env) or setting.default
