"""The command line as a whole: every command reachable, and a malformed setting reported as the
environment's fault (one line naming the variable, exit code 1), not as a malformed option."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from adapters.dialect.session import batch_runs
from jobs import demo
from jobs.cli import main
from tests.conftest import REPO_ROOT


def test_every_command_of_the_group_is_reachable_when_run_as_a_module() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    commands = {line.split()[0] for line in listed.split("Commands:")[1].splitlines() if line.strip()}
    assert commands == set(main.commands)


@pytest.fixture
def database(tmp_path: Path) -> str:
    """An existing (empty) SQLite file: the commands get past --db and read their settings."""
    path = tmp_path / "existing.sqlite"
    path.touch()
    return f"sqlite:///{path}"


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ports `runrecord dashboard` and `runrecord demo` would have served on; nothing is served."""
    served: list[int] = []

    def serve(_db_url: str, *, port: int, say: object = None) -> int:
        served.append(port)
        return 0

    monkeypatch.setattr(demo, "serve_dashboard", serve)
    monkeypatch.setattr(demo, "serve_demo", serve)
    # Whatever listens on this machine's ports: the commands here never get to serve.
    monkeypatch.setattr(demo, "require_free_port", lambda port: None)
    return served


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port of 127.0.0.1 something listens on while the test runs."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        yield int(listening.getsockname()[1])


@pytest.mark.parametrize("command", ["dashboard", "demo"])
def test_a_dashboard_port_in_use_is_one_line_before_anything_is_printed_built_or_served(
    monkeypatch: pytest.MonkeyPatch,
    run_cli: Callable[..., Result],
    tmp_path: Path,
    busy_port: int,
    command: str,
) -> None:
    served: list[int] = []
    monkeypatch.setattr(demo, "serve_dashboard", lambda *_, port, **__: served.append(port) or 0)
    monkeypatch.setattr(demo, "serve_demo", lambda *_, port, **__: served.append(port) or 0)
    existing = tmp_path / "existing.sqlite"
    existing.touch()
    target = existing if command == "dashboard" else tmp_path / "demo.sqlite"

    result = run_cli(command, "--db", f"sqlite:///{target}", "--port", str(busy_port))

    assert result.exit_code == 1 and result.stdout == "" and served == []
    assert result.stderr == (
        f"runrecord: error: port {busy_port} on 127.0.0.1 is in use (Address already in use): stop what "
        "listens there, or give the dashboard another with --port or RUNRECORD_DASHBOARD_PORT\n"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["existing.sqlite"]


@pytest.mark.parametrize(
    ("variable", "value", "command"),
    [
        ("RUNRECORD_WINDOW_DAYS", "abc", ("derive-outcomes",)),
        ("RUNRECORD_WINDOW_DAYS", "0", ("derive-outcomes",)),
        ("RUNRECORD_WINDOW_DAYS", "abc", ("measure-rates",)),
        ("RUNRECORD_WINDOW_DAYS", "abc", ("watch-conversations",)),
        ("RUNRECORD_WINDOW_DAYS", "abc", ("dashboard",)),
        ("RUNRECORD_DASHBOARD_PORT", "abc", ("dashboard",)),
        ("RUNRECORD_DASHBOARD_PORT", "0", ("dashboard",)),
        ("RUNRECORD_ADMIN_SESSION_MINUTES", "0", ("dashboard",)),
        ("RUNRECORD_MISFIRE_GRACE_SECONDS", "soon", ("scheduler", "--dry-run")),
    ],
    ids=lambda part: " ".join(part) if isinstance(part, tuple) else part,
)
def test_a_malformed_setting_is_one_line_naming_the_variable_and_exit_code_1(
    monkeypatch: pytest.MonkeyPatch,
    run_cli: Callable[..., Result],
    database: str,
    no_server: list[int],
    variable: str,
    value: str,
    command: tuple[str, ...],
) -> None:
    monkeypatch.setenv(variable, value)

    result = run_cli(*command, "--db", database)

    assert result.exit_code == 1, result.output
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"runrecord: error: {variable}={value!r} is not ")
    assert result.stdout == "" and no_server == []


@pytest.mark.parametrize(
    ("malformed", "args"),
    [
        ("RUNRECORD_DASHBOARD_PORT", ()),
        ("RUNRECORD_WINDOW_DAYS", ("--no-dashboard",)),
        ("RUNRECORD_ADMIN_SESSION_MINUTES", ()),
    ],
)
def test_the_demo_checks_its_settings_before_it_builds_anything(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    run_cli: Callable[..., Result],
    no_server: list[int],
    malformed: str,
    args: tuple[str, ...],
) -> None:
    monkeypatch.setenv(malformed, "abc")

    result = run_cli("demo", *args, "--db", f"sqlite:///{tmp_path / 'data' / 'demo.sqlite'}")

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"runrecord: error: {malformed}='abc' is not ")
    assert list(tmp_path.iterdir()) == [] and no_server == []


def test_an_option_given_is_used_and_the_setting_it_replaces_is_not_read(
    monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Result], database: str, no_server: list[int]
) -> None:
    monkeypatch.setenv("RUNRECORD_DASHBOARD_PORT", "abc")

    result = run_cli("dashboard", "--db", database, "--port", "8502")

    assert result.exit_code == 0, result.output
    assert no_server == [8502]


def test_a_malformed_port_option_is_still_a_usage_error(
    run_cli: Callable[..., Result], database: str, no_server: list[int]
) -> None:
    result = run_cli("dashboard", "--db", database, "--port", "0")

    assert result.exit_code == 2 and "--port" in result.stderr and no_server == []


@pytest.mark.parametrize("command", [("dashboard",), ("demo",)], ids=" ".join)
def test_a_session_secret_too_short_stops_the_dashboard_in_one_line_that_does_not_repeat_it(
    monkeypatch: pytest.MonkeyPatch,
    run_cli: Callable[..., Result],
    database: str,
    no_server: list[int],
    command: tuple[str, ...],
) -> None:
    monkeypatch.setenv("RUNRECORD_ADMIN_SESSION_SECRET", "too-short-4711")

    result = run_cli(*command, "--db", database)

    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("runrecord: error: RUNRECORD_ADMIN_SESSION_SECRET is too short")
    assert "too-short-4711" not in result.stderr and no_server == []


def test_derive_outcomes_help_states_the_default_batch_the_job_uses_on_each_dialect() -> None:
    result = CliRunner().invoke(main, ["derive-outcomes", "--help"], prog_name="runrecord")

    flat = " ".join(result.output.split())
    assert f"default: ({batch_runs('sqlite')} on SQLite, else {batch_runs('postgresql')})" in flat
    assert batch_runs("mariadb") == batch_runs("postgresql") != batch_runs("sqlite")


def test_a_command_stopped_by_ctrl_c_says_so_in_one_line_and_exits_130(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("jobs.schema_setup.init_db", interrupted)

    result = CliRunner().invoke(main, ["init-db", "--db", database], prog_name="runrecord")

    assert result.exit_code == 130
    assert result.stderr == (
        "runrecord: stopped (Ctrl-C) before runrecord init-db finished; what it had committed stays, the "
        "rest was not kept\n"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to write to")
def test_an_output_that_cannot_be_written_is_one_error_line_and_exit_1() -> None:
    with open("/dev/full", "w") as full:
        finished = subprocess.run(
            [sys.executable, "-m", "jobs.cli", "--help"],
            cwd=REPO_ROOT,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )

    assert finished.returncode == 1
    assert finished.stderr == "runrecord: error: No space left on device\n"
