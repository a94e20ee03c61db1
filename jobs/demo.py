"""`runrecord demo` and `runrecord dashboard`: the embedded installation and the dashboard on localhost."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sqlalchemy.engine import URL

import dashboard
from core.schema import REQUIRED_UPSTREAM
from jobs.database import RunrecordError, describe, make_engine, parse_url, sqlite_path, table_names
from jobs.installation.generate import GenerateReport, Progress, default_manifest, generate

DEMO_CONVERSATIONS = 100
DEMO_SEED = 1
APP = Path(dashboard.__file__).parent / "app.py"


def absolute(url: URL) -> URL:
    """A SQLite URL with an absolute path, so that a process started elsewhere opens the same file."""
    path = sqlite_path(url)
    return url if path is None else url.set(database=str(path.resolve()))


def ensure_demo_database(
    url: URL, *, now: datetime, progress: Callable[[Progress], None] | None = None
) -> GenerateReport | None:
    """Build the demo installation when the SQLite file is missing; None when it was there."""
    path = sqlite_path(url)
    if path is None:
        raise RunrecordError(
            f"the demo builds a SQLite file; {describe(url)} is not one (use --db sqlite:///…)"
        )
    if path.exists():
        _check_demo_database(url)
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    return generate(
        url.render_as_string(hide_password=False),
        conversations=DEMO_CONVERSATIONS,
        seed=DEMO_SEED,
        now=now,
        manifest=default_manifest(url),
        progress=progress,
    )


def _check_demo_database(url: URL) -> None:
    """An existing demo file must be a database with the installation's tables."""
    engine = make_engine(url)
    try:
        missing = set(REQUIRED_UPSTREAM) - table_names(engine)
    finally:
        engine.dispose()
    if missing:
        raise RunrecordError(
            f"{url.database} is not a demo installation (it lacks {', '.join(sorted(missing))}); "
            "remove it and run the demo again to rebuild it"
        )


def dashboard_command(url: URL, *, port: int) -> list[str]:
    """The command line that serves the dashboard on localhost."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.address=127.0.0.1",
        f"--server.port={port}",
        "--server.headless=true",
        "--browser.gatherUsageStats=false",
    ]


def serve_dashboard(db_url: str, *, port: int) -> int:
    """Run the dashboard in the foreground until it is stopped; returns its exit code."""
    url = absolute(parse_url(db_url))
    environment = {**os.environ, "RUNRECORD_DB": url.render_as_string(hide_password=False)}
    try:
        return subprocess.call(dashboard_command(url, port=port), env=environment)
    except KeyboardInterrupt:
        return 0
