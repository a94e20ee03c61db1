"""`runrecord demo` builds the embedded installation once, and the dashboard serves it on localhost."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from sqlalchemy import func, select

from adapters import schema
from adapters.database import make_engine, parse_url, sqlite_path
from adapters.passwords import verify_password
from jobs import demo
from jobs.demo import oidc_configured, sign_in
from jobs.scheduler_config import JOBS

SERVE_TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _health_when_up(port: int) -> str:
    """What the dashboard's health endpoint says once it answers, or "" when it never did."""
    deadline = time.monotonic() + SERVE_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                return str(answer.read().decode())
        except OSError:
            time.sleep(0.3)
    return ""


def test_demo_builds_the_embedded_database_once_under_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Result]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RUNRECORD_DB", raising=False)

    first = run_cli("demo", "--no-dashboard")
    second = run_cli("demo", "--no-dashboard")

    assert first.exit_code == 0, first.output
    assert "built the demo installation" in first.output
    assert "marked the release of" in first.output
    for job in ("derive-outcomes", "measure-rates", "watch-conversations"):
        assert f"{job}: ok" in first.output
    assert (tmp_path / "data" / "demo.sqlite").stat().st_size > 0
    assert (tmp_path / "data" / "demo.manifest.json").exists()
    assert second.exit_code == 0 and "using the demo installation" in second.output


def test_a_job_that_fails_fails_the_demo_in_one_line_naming_it_and_no_dashboard_is_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Result], demo_db_url: str
) -> None:
    source = sqlite_path(parse_url(demo_db_url))
    assert source is not None
    copy = tmp_path / "demo.sqlite"
    shutil.copyfile(source, copy)
    monkeypatch.setattr(demo, "JOBS", {**JOBS, "measure-rates": "jobs.nowhere:run_job"})
    served: list[int] = []

    def serve(_db_url: str, *, port: int, say: object) -> int:
        served.append(port)
        return 0

    monkeypatch.setattr(demo, "serve_demo", serve)

    result = run_cli("demo", "--db", f"sqlite:///{copy}")

    assert result.exit_code == 1
    assert "derive-outcomes: ok" in result.stdout and "measure-rates: failed" in result.stdout
    assert "watch-conversations: ok" in result.stdout  # every job runs before the demo gives up
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("runrecord: error: ") and "measure-rates failed" in result.stderr
    assert "derive-outcomes" not in result.stderr and served == []
    assert "dashboard on" not in result.stdout


def test_the_demo_refuses_a_database_that_is_not_a_sqlite_file(run_cli: Callable[..., Result]) -> None:
    result = run_cli("demo", "--no-dashboard", "--db", "postgresql+psycopg://nobody@127.0.0.1:1/x")

    assert result.exit_code == 1
    assert result.stderr.startswith("runrecord: error:") and "SQLite" in result.stderr


def test_the_dashboard_serves_a_page_on_localhost(demo_db_url: str) -> None:
    port = _free_port()
    environment = {**os.environ, "RUNRECORD_DB": demo_db_url}
    command = [sys.executable, "-m", "jobs.cli", "dashboard", "--port", str(port)]
    server = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        health = _health_when_up(port)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
            body = page.read().decode()
    finally:
        server.terminate()
        output = server.communicate(timeout=20)[0].decode()

    assert health == "ok"
    assert "<title>" in body
    assert re.search(r"^administrator password: \S{16}$", output, re.MULTILINE), output


def test_the_dashboard_is_served_with_the_viewers_toolbar_only_so_no_deploy_button() -> None:
    command = demo.dashboard_command(parse_url("sqlite:///demo.sqlite"), port=8501)

    assert "--client.toolbarMode=viewer" in command
    assert command[command.index("run") + 1] == str(demo.APP)


def test_the_demo_refuses_a_file_under_data_that_is_not_a_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Result]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RUNRECORD_DB", raising=False)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "demo.sqlite").write_text("these are notes, not a database")

    result = run_cli("demo", "--no-dashboard")

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("runrecord: error:")
    assert (tmp_path / "data" / "demo.sqlite").read_text() == "these are notes, not a database"


def test_each_start_makes_an_administrator_password_and_passes_only_its_hash() -> None:
    environment, lines = sign_in({"PATH": "/usr/bin"}, oidc=False)

    password = lines[0].removeprefix("administrator password: ")
    assert lines[0].startswith("administrator password: ") and len(password) == 16
    assert verify_password(password, environment["RUNRECORD_ADMIN_PASSWORD_HASH"])
    assert all(password not in value for value in environment.values())


def test_a_configured_hash_is_kept_and_no_password_is_made() -> None:
    configured = {"RUNRECORD_ADMIN_PASSWORD_HASH": "pbkdf2_sha256$600000$c2FsdA$aGFzaA"}

    environment, lines = sign_in(configured, oidc=False)

    assert environment == configured
    assert not any(line.startswith("administrator password:") for line in lines)


def test_with_oidc_the_start_says_to_sign_in_with_the_identity_provider() -> None:
    environment, lines = sign_in({"RUNRECORD_ADMIN_EMAILS": "ops@example.org"}, oidc=True)

    assert "RUNRECORD_ADMIN_PASSWORD_HASH" not in environment
    assert "identity provider" in lines[0] and "ops@example.org" in lines[1]


@pytest.mark.parametrize(
    ("secrets", "configured"),
    [
        ('[auth]\nredirect_uri = "http://localhost:8501/oauth2callback"\n', True),
        ('[auth.google]\nclient_id = "x"\n', True),
        ('[database]\nurl = "x"\n', False),
        ("[auth\nbroken", False),
        (None, False),
    ],
)
def test_oidc_is_configured_by_an_auth_section_in_secrets_toml(
    tmp_path: Path, secrets: str | None, configured: bool
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    if secrets is not None:
        (tmp_path / ".streamlit").mkdir()
        (tmp_path / ".streamlit" / "secrets.toml").write_text(secrets)

    assert oidc_configured(tmp_path, home) is configured


def test_the_demo_marks_the_planted_release_once_and_logs_every_job_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Result]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RUNRECORD_DB", raising=False)

    run_cli("demo", "--no-dashboard")
    run_cli("demo", "--no-dashboard")

    engine = make_engine(f"sqlite:///{tmp_path / 'data' / 'demo.sqlite'}")
    with engine.connect() as connection:
        releases = connection.execute(select(schema.release.c.released_on)).scalars().all()
        runs = connection.execute(select(schema.job_run.c.job, schema.job_run.c.status)).all()
        compare = connection.execute(select(func.count()).select_from(schema.rate)).scalar()
    engine.dispose()
    manifest = json.loads((tmp_path / "data" / "demo.manifest.json").read_text())
    assert [day.isoformat() for day in releases] == [manifest["release"]["date"]]
    assert sorted(runs) == sorted([(job, "ok") for job in JOBS] * 2)
    assert compare > 0


def test_stopping_the_demo_stops_the_dashboard_and_the_scheduler_with_it(tmp_path: Path) -> None:
    port = _free_port()
    environment = {key: value for key, value in os.environ.items() if key != "RUNRECORD_DB"}
    command = [sys.executable, "-m", "jobs.cli", "demo", "--port", str(port)]
    demo = subprocess.Popen(
        command, cwd=tmp_path, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        health = _health_when_up(port)
    finally:
        demo.send_signal(signal.SIGTERM)
        output = demo.communicate(timeout=30)[0].decode()

    assert health == "ok", output
    assert "with the scheduler beside it" in output
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
