"""`runrecord demo` builds the embedded installation once, and the dashboard serves it on localhost."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

SERVE_TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_demo_builds_the_embedded_database_once_under_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Result]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RUNRECORD_DB", raising=False)

    first = run_cli("demo", "--no-dashboard")
    second = run_cli("demo", "--no-dashboard")

    assert first.exit_code == 0, first.output
    assert "built the demo installation" in first.output
    assert (tmp_path / "data" / "demo.sqlite").stat().st_size > 0
    assert (tmp_path / "data" / "demo.manifest.json").exists()
    assert second.exit_code == 0 and "using the demo installation" in second.output


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
        deadline = time.monotonic() + SERVE_TIMEOUT_S
        health = ""
        while time.monotonic() < deadline and health != "ok":
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                    health = answer.read().decode()
            except OSError:
                time.sleep(0.3)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
            body = page.read().decode()
    finally:
        server.terminate()
        server.wait(timeout=20)

    assert health == "ok"
    assert "<title>" in body


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
