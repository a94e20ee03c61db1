"""`runrecord demo` and `runrecord dashboard`: the embedded installation and the dashboard on localhost."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping
from datetime import date, datetime
from pathlib import Path

from sqlalchemy.engine import URL

from adapters import clock, settings
from adapters.database import RunrecordError, describe, make_engine, parse_url, sqlite_path, table_names
from adapters.passwords import hash_password, one_time_password
from adapters.schema import REQUIRED_UPSTREAM
from data.generate import GenerateReport, Progress, default_manifest, generate
from jobs import scheduler
from jobs.job_log import Status, run_logged
from jobs.releases import add_release
from jobs.scheduler_config import JOBS, SchedulerConfig
from jobs.schema_setup import init_installation, upgrade_ours

# Enough conversations that the planted release reads as a significant drop of claimed_unwritten_rate
# under core.rates' rule (four weeks on each side); with seed 1 that holds from about 1,050 on.
DEMO_CONVERSATIONS = 1_200
DEMO_SEED = 1
# Found by path: jobs/ never imports the dashboard, it starts it as a process of its own.
APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"


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
        create_tables=init_installation,
        conversations=DEMO_CONVERSATIONS,
        seed=DEMO_SEED,
        now=now,
        manifest=default_manifest(url),
        progress=progress,
    )


def prepare_demo(url: URL, *, say: Callable[[str], None]) -> None:
    """Bring our tables to the newest revision, mark the planted release, and run every job once;
    RunrecordError naming the jobs that failed, after all have run."""
    engine = make_engine(url)
    try:
        upgrade_ours(engine)
        manifest = default_manifest(url)
        if manifest is not None and manifest.exists():
            release = json.loads(manifest.read_text(encoding="utf-8"))["release"]
            day = date.fromisoformat(release["date"])
            if add_release(engine, day, release["label"], now=clock.unix()):
                say(f"marked the release of {day.isoformat()}: {release['label']}")
    finally:
        engine.dispose()
    target = url.render_as_string(hide_password=False)
    failed = []
    for job, reference in JOBS.items():
        execution = run_logged(job, reference, target)
        seconds = execution.duration_ms / 1000
        say(f"{job}: {execution.status.value} in {seconds:.1f} s: {execution.result.message}")
        if execution.status is not Status.OK:
            failed.append(job)
    if failed:
        raise RunrecordError(f"the demo's jobs did not all finish ok: {', '.join(failed)} failed (see above)")


def require_free_port(port: int) -> None:
    """Stop with one line, before anything is printed or started, when something already listens on the
    dashboard's port on 127.0.0.1 (Streamlit would say so only after the dashboard's address was printed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As Streamlit's server binds: a port whose last connection is still closing is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            state = "is in use" if error.errno == errno.EADDRINUSE else "cannot be used"
            raise RunrecordError(
                f"port {port} on 127.0.0.1 {state} ({error.strerror}): stop what listens there, or give "
                "the dashboard another with --port or RUNRECORD_DASHBOARD_PORT"
            ) from None


def serve_demo(db_url: str, *, port: int, say: Callable[[str], None]) -> int:
    """The dashboard as a child process and the scheduler in this one, until Ctrl-C or SIGTERM stops both."""
    url, environment = _dashboard_environment(db_url, say)
    target = url.render_as_string(hide_password=False)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        with scheduler.beside(target, SchedulerConfig.from_settings()):
            server = subprocess.Popen(dashboard_command(url, port=port), env=environment)
            try:
                return server.wait()
            except KeyboardInterrupt:
                return 0
            finally:
                if server.poll() is None:
                    server.terminate()
                    try:
                        server.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        server.kill()
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(_signal: int, _frame: object) -> None:
    raise KeyboardInterrupt


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
    """The command line that serves the dashboard on localhost, with the viewer's toolbar only."""
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
        # The product, not the framework: no "Deploy" button, rerun or clear-cache items in the menu.
        "--client.toolbarMode=viewer",
    ]


def oidc_configured(cwd: Path, home: Path) -> bool:
    """Whether the dashboard will find an [auth] section in a secrets.toml where Streamlit looks for one."""
    for path in (cwd / ".streamlit" / "secrets.toml", home / ".streamlit" / "secrets.toml"):
        try:
            with path.open("rb") as file:
                if "auth" in tomllib.load(file):
                    return True
        except (OSError, tomllib.TOMLDecodeError):
            continue
    return False


def sign_in(environment: Mapping[str, str], *, oidc: bool) -> tuple[dict[str, str], list[str]]:
    """The dashboard process's environment and the lines that tell the person who started it how to sign in.

    Without OIDC and without a configured hash, a random administrator password is made for this start: only
    its hash goes to the dashboard, and the password itself is printed here once and stored nowhere.
    """
    child = dict(environment)
    hash_env = _env_of("admin_password_hash")
    if oidc:
        admins = child.get(_env_of("admin_emails"), "").strip()
        return child, [
            "sign in with the identity provider configured in .streamlit/secrets.toml ([auth]);",
            f"administrators: {admins or 'none (set RUNRECORD_ADMIN_EMAILS)'}",
        ]
    if child.get(hash_env, "").strip():
        return child, [
            "Rates and Runs are open on this machine; the Conversations, Conversation and Health pages ask "
            "for the administrator",
            f"password whose hash {hash_env} holds",
        ]
    password = one_time_password()
    child[hash_env] = hash_password(password)
    return child, [
        f"administrator password: {password}",
        "(made for this start and stored nowhere: Rates and Runs need none, the Conversations, "
        "Conversation and Health pages ask for it in their place or under 'Administrator sign-in', and a "
        "sign-in lasts "
        f"{settings.get('admin_session_minutes')} minutes in that browser; set {hash_env} with "
        "`runrecord hash-password` to keep one)",
    ]


def serve_dashboard(db_url: str, *, port: int, say: Callable[[str], None] | None = None) -> int:
    """Serve the dashboard in the foreground until it is stopped; returns its exit code.

    The command becomes the Streamlit process (exec), so that stopping it (Ctrl-C, SIGTERM) stops the server
    itself rather than leaving it running without its parent.
    """
    url, environment = _dashboard_environment(db_url, say or _print)
    command = dashboard_command(url, port=port)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(command[0], command, environment)
    except OSError as error:
        raise RunrecordError(f"cannot start the dashboard: {error}") from error
    return 0  # not reached: execve replaces this process


def _dashboard_environment(db_url: str, say: Callable[[str], None]) -> tuple[URL, dict[str, str]]:
    """The database URL (a SQLite path made absolute) and the dashboard's environment; says how to sign in."""
    url = absolute(parse_url(db_url))
    environment = {**os.environ, "RUNRECORD_DB": url.render_as_string(hide_password=False)}
    environment, lines = sign_in(environment, oidc=oidc_configured(Path.cwd(), Path.home()))
    for line in lines:
        say(line)
    return url, environment


def _env_of(name: str) -> str:
    return next(setting.env for setting in settings.SETTINGS if setting.name == name)


def _print(line: str) -> None:
    print(line, flush=True)
