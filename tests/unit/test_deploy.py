"""deploy/: the systemd units and the example files name only what runrecord has — its commands and their
options (the click command of jobs/cli.py) and its settings (adapters.settings.SETTINGS) — and the units are
hardened; systemd-analyze checks them where it is installed. Each checker is shown a break."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from adapters.settings import SETTINGS
from jobs.cli import main
from tests.conftest import REPO_ROOT

DEPLOY = REPO_ROOT / "deploy"
UNITS = sorted(DEPLOY.glob("*.service"))
SERVICES = ("runrecord-scheduler.service", "runrecord-dashboard.service")
ENV_EXAMPLE = DEPLOY / "runrecord.env.example"
ENV_FILE = "/etc/runrecord/runrecord.env"  # where the README installs the example
SETTING_NAMES = frozenset(setting.env for setting in SETTINGS)
# Variables a unit may set besides runrecord's settings.
UNIT_VARIABLES = frozenset({"HOME"})
EXEC_KEYS = frozenset(
    {"ExecCondition", "ExecStartPre", "ExecStart", "ExecStartPost", "ExecReload", "ExecStop", "ExecStopPost"}
)
RUNRECORD_VARIABLE = re.compile(r"\bRUNRECORD_[A-Z0-9_]+\b")
# An assignment of the example environment file, in use or left commented at its default.
ASSIGNMENT = re.compile(r"^(?:#\s*)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
SECURITY_THRESHOLD = 20  # systemd-analyze security: an overall exposure above 2.0 fails
# The lines a unit's sandbox is made of (removed, the security check must fail).
HARDENING = (
    "Protect",
    "Private",
    "Restrict",
    "SystemCall",
    "Capability",
    "NoNewPrivileges",
    "Lock",
    "Remove",
)
Entry = tuple[str, str, str]  # section, key, value


def unit_entries(text: str) -> list[Entry]:
    """A unit file's assignments in order, as systemd reads them: comments skipped, a trailing backslash
    continuing the line."""
    entries: list[Entry] = []
    section = ""
    pending = ""
    for raw in text.splitlines():
        line = (pending + raw.strip()) if pending else raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1].rstrip() + " "
            continue
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, _, value = line.partition("=")
        entries.append((section, key.strip(), value.strip()))
    return entries


def values(entries: list[Entry], key: str) -> list[str]:
    """Every value of `key` in a unit, in order."""
    return [value for _, found, value in entries if found == key]


def _option_problems(command: click.Command, where: str, args: list[str]) -> list[str]:
    options = {
        name: param
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }
    problems: list[str] = []
    positional: list[str] = []
    words = iter(args)
    for word in words:
        if word == "--":
            positional.extend(words)
            break
        if not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        name, equals, value = word.partition("=")
        option = options.get(name)
        if option is None:
            problems.append(f"{where}: no option {name}")
            continue
        if option.is_flag or option.count:
            if equals:
                problems.append(f"{where}: {name} takes no value")
            continue
        if not equals:
            following = next(words, None)
            if following is None:
                problems.append(f"{where}: {name} needs a value")
                break
            value = following
        if "$" in value:
            continue  # a variable systemd substitutes: its name is checked with the settings
        try:
            option.type.convert(value, option, None)
        except click.BadParameter as error:
            problems.append(f"{where}: {name} {value!r}: {error.format_message()}")
    arguments = [param for param in command.params if isinstance(param, click.Argument)]
    required = sum(param.nargs for param in arguments if param.required and param.nargs > 0)
    unbounded = any(param.nargs < 0 for param in arguments)
    most = sum(param.nargs for param in arguments if param.nargs > 0)
    if len(positional) < required or (not unbounded and len(positional) > most):
        problems.append(f"{where}: takes {most} argument(s), given {len(positional)}: {positional}")
    return problems


def command_problems(command_line: str) -> list[str]:
    """What is wrong with one Exec line: a program other than an absolute path to runrecord, or a command or
    option runrecord's command line does not have; [] when there is nothing."""
    words = shlex.split(command_line)
    if not words:
        return ["an empty command"]
    program = words[0].lstrip("-@:+!")
    if not program.startswith("/") or Path(program).name != "runrecord":
        return [f"{program}: not an absolute path to runrecord"]
    command: click.Command = main
    where = "runrecord"
    args = words[1:]
    while isinstance(command, click.Group):
        if not args:
            return [f"{where}: no command given"]
        name = args.pop(0)
        found = command.commands.get(name)
        if found is None:
            return [f"{where}: no command {name!r}"]
        command, where = found, f"{where} {name}"
    return _option_problems(command, where, args)


def test_a_unit_is_read_as_systemd_reads_it_comments_skipped_and_continuations_joined() -> None:
    text = "# a comment\n[Service]\n; another\nExecStart=/opt/runrecord/venv/bin/runrecord \\\n  scheduler\n"

    entries = unit_entries(text)

    assert entries == [("Service", "ExecStart", "/opt/runrecord/venv/bin/runrecord scheduler")]


@pytest.mark.parametrize("unit", UNITS, ids=lambda path: path.name)
def test_every_command_a_unit_runs_is_a_runrecord_command_with_options_it_has(unit: Path) -> None:
    entries = unit_entries(unit.read_text(encoding="utf-8"))
    commands = [value for _, key, value in entries if key in EXEC_KEYS]

    problems = [problem for command in commands for problem in command_problems(command)]

    assert commands and problems == []


@pytest.mark.parametrize(
    "command_line",
    [
        "/usr/bin/python3 -m streamlit run dashboard/app.py",  # not runrecord
        "runrecord scheduler",  # not an absolute path
        "/opt/runrecord/venv/bin/runrecord",  # no command
        "/opt/runrecord/venv/bin/runrecord sheduler",  # no such command
        "/opt/runrecord/venv/bin/runrecord scheduler --dryrun",  # no such option
        "/opt/runrecord/venv/bin/runrecord scheduler --dry-run=yes",  # a flag takes no value
        "/opt/runrecord/venv/bin/runrecord dashboard --port",  # a value missing
        "/opt/runrecord/venv/bin/runrecord dashboard --port eighty",  # not a port
        "/opt/runrecord/venv/bin/runrecord measure-rates --grain month",  # not a choice
        "/opt/runrecord/venv/bin/runrecord release",  # a group without its command
        "/opt/runrecord/venv/bin/runrecord init-db extra",  # an argument it does not take
    ],
)
def test_the_command_check_rejects_what_runrecord_does_not_have(command_line: str) -> None:
    problems = command_problems(command_line)

    assert problems != []


@pytest.mark.parametrize(
    "command_line",
    [
        "/opt/runrecord/venv/bin/runrecord scheduler --dry-run",
        "-/opt/runrecord/venv/bin/runrecord measure-rates --grain=day --json",
        "/opt/runrecord/venv/bin/runrecord dashboard --port ${RUNRECORD_DASHBOARD_PORT}",
        "/opt/runrecord/venv/bin/runrecord release add 2026-10-10 'Prompt rule'",
    ],
)
def test_the_command_check_accepts_runrecord_commands_as_systemd_writes_them(command_line: str) -> None:
    problems = command_problems(command_line)

    assert problems == []


def _unknown_variables(text: str) -> set[str]:
    return set(RUNRECORD_VARIABLE.findall(text)) - SETTING_NAMES


@pytest.mark.parametrize("path", sorted(DEPLOY.iterdir()), ids=lambda path: path.name)
def test_every_runrecord_variable_a_deploy_file_names_is_a_setting(path: Path) -> None:
    text = path.read_text(encoding="utf-8")

    unknown = _unknown_variables(text)

    assert unknown == set()


def test_the_variable_check_rejects_a_setting_that_does_not_exist() -> None:
    unknown = _unknown_variables("RUNRECORD_WINDOW_DAY='7'\nRUNRECORD_WINDOW_DAYS='7'")

    assert unknown == {"RUNRECORD_WINDOW_DAY"}


@pytest.mark.parametrize("unit", UNITS, ids=lambda path: path.name)
def test_a_unit_sets_no_variable_but_runrecords_settings_and_home(unit: Path) -> None:
    entries = unit_entries(unit.read_text(encoding="utf-8"))
    assigned = {
        word.split("=", 1)[0] for value in values(entries, "Environment") for word in shlex.split(value)
    }

    assert assigned <= SETTING_NAMES | UNIT_VARIABLES


def _assignments(text: str) -> list[tuple[str, str]]:
    return [
        (match.group(1), match.group(2))
        for match in (ASSIGNMENT.match(line.strip()) for line in text.splitlines())
        if match is not None
    ]


def test_the_example_environment_file_assigns_each_setting_and_nothing_else() -> None:
    assigned = _assignments(ENV_EXAMPLE.read_text(encoding="utf-8"))

    names = {name for name, _ in assigned}
    assert names == SETTING_NAMES


def test_every_value_of_the_example_environment_file_is_single_quoted_so_systemd_and_sh_read_it_alike() -> (
    None
):
    assigned = _assignments(ENV_EXAMPLE.read_text(encoding="utf-8"))

    unquoted = [name for name, value in assigned if not re.fullmatch(r"'[^']*'", value)]

    assert assigned and unquoted == []


def test_the_assignment_check_finds_a_misspelt_setting_even_when_commented_out() -> None:
    assigned = _assignments("# a comment\n# RUNRECORD_DERIVE_CRONS='30 2 * * *'\nRUNRECORD_DB='sqlite:///x'")

    assert {name for name, _ in assigned} - SETTING_NAMES == {"RUNRECORD_DERIVE_CRONS"}


@pytest.mark.parametrize("name", SERVICES)
def test_each_service_restarts_on_failure_as_its_own_user_with_the_settings_file_and_hardening(
    name: str,
) -> None:
    entries = unit_entries((DEPLOY / name).read_text(encoding="utf-8"))

    settings = {key: value for _, key, value in entries}
    assert settings["Restart"] == "on-failure"
    assert settings["User"] == settings["Group"] == "runrecord"
    assert values(entries, "EnvironmentFile") == [ENV_FILE]
    assert settings["NoNewPrivileges"] == "yes"
    assert settings["ProtectSystem"] == "strict"
    assert settings["ProtectHome"] == "yes"
    assert settings["PrivateTmp"] == "yes"
    assert settings["CapabilityBoundingSet"] == ""


def test_the_units_run_the_scheduler_and_the_dashboard() -> None:
    started = {
        unit.name: values(unit_entries(unit.read_text(encoding="utf-8")), "ExecStart") for unit in UNITS
    }

    assert started["runrecord-scheduler.service"] == ["/opt/runrecord/venv/bin/runrecord scheduler"]
    assert started["runrecord-dashboard.service"] == ["/opt/runrecord/venv/bin/runrecord dashboard"]


def _runnable_copies(directory: Path) -> list[Path]:
    """The units with their program replaced by this environment's runrecord: systemd-analyze verify
    requires every command to be an executable file."""
    program = Path(sys.executable).with_name("runrecord")
    copies = []
    for unit in UNITS:
        text = unit.read_text(encoding="utf-8").replace("/opt/runrecord/venv/bin/runrecord", str(program))
        copy = directory / unit.name
        copy.write_text(text, encoding="utf-8")
        copies.append(copy)
    return copies


def _systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        pytest.skip("systemd-analyze is not installed (Debian: apt-get install systemd)")
    if not Path(sys.executable).with_name("runrecord").exists():
        pytest.skip("runrecord is not installed beside this Python (pip install -e .)")
    return found


def _verify(analyze: str, units: list[Path]) -> list[str]:
    """What systemd-analyze verify says about the units: it warns about an unknown key or a bad value on a
    line naming the unit, and exits 0 all the same, so every such line is a problem."""
    result = subprocess.run(
        [analyze, "verify", "--man=no", *map(str, units)], capture_output=True, text=True, check=False
    )
    lines = (result.stdout + result.stderr).splitlines()
    said = [line for line in lines if any(unit.name in line for unit in units)]
    return said + ([f"exit {result.returncode}"] if result.returncode != 0 else [])


def test_systemd_analyze_verify_finds_nothing_to_say_about_the_units(tmp_path: Path) -> None:
    analyze = _systemd_analyze()
    units = _runnable_copies(tmp_path)

    said = _verify(analyze, units)

    assert said == []


def test_systemd_analyze_verify_reports_a_misspelt_key(tmp_path: Path) -> None:
    analyze = _systemd_analyze()
    units = _runnable_copies(tmp_path)
    broken = units[0]
    broken.write_text(broken.read_text(encoding="utf-8").replace("NoNewPrivileges=", "NoNewPrivilege="))

    said = _verify(analyze, [broken])

    assert any("NoNewPrivilege" in line for line in said)


def _security(analyze: str, unit: Path) -> subprocess.CompletedProcess[str]:
    """systemd-analyze security on the unit file alone, failing above SECURITY_THRESHOLD."""
    command = [analyze, "security", "--offline=yes", "--no-pager", f"--threshold={SECURITY_THRESHOLD}"]
    result = subprocess.run([*command, str(unit)], capture_output=True, text=True, check=False)
    if "--offline" in result.stderr and "unrecognized" in result.stderr:
        pytest.skip("this systemd-analyze cannot rate a unit offline (systemd 250 or newer can)")
    return result


@pytest.mark.parametrize("name", [unit.name for unit in UNITS])
def test_systemd_analyze_security_rates_each_unit_within_the_threshold(name: str, tmp_path: Path) -> None:
    analyze = _systemd_analyze()
    unit = next(copy for copy in _runnable_copies(tmp_path) if copy.name == name)

    result = _security(analyze, unit)

    overall = [line for line in result.stdout.splitlines() if "Overall exposure level" in line]
    assert result.returncode == 0, overall or result.stderr


def test_systemd_analyze_security_fails_a_unit_without_its_hardening(tmp_path: Path) -> None:
    analyze = _systemd_analyze()
    unit = _runnable_copies(tmp_path)[0]
    kept = [line for line in unit.read_text(encoding="utf-8").splitlines() if not line.startswith(HARDENING)]
    unit.write_text("\n".join(kept) + "\n", encoding="utf-8")

    result = _security(analyze, unit)

    assert result.returncode != 0
