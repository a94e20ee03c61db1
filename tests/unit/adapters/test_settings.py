"""Numeric settings: each is read through one validated reader; a malformed value is one error line that
names the variable and its value, never a traceback."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from adapters import settings
from adapters.database import RunrecordError
from core.time import DAY_S
from jobs import job_log
from jobs.scheduler_config import JOBS
from tests.conftest import REPO_ROOT

READERS: dict[str, tuple[str, Callable[[], int]]] = {
    "window": ("RUNRECORD_WINDOW_DAYS", settings.window_days),
    "port": ("RUNRECORD_DASHBOARD_PORT", settings.dashboard_port),
    "grace": ("RUNRECORD_MISFIRE_GRACE_SECONDS", settings.misfire_grace_seconds),
    "lease": ("RUNRECORD_SCHEDULER_LEASE_SECONDS", settings.lease_seconds),
    "session": ("RUNRECORD_ADMIN_SESSION_MINUTES", settings.admin_session_minutes),
}


@pytest.mark.parametrize(
    ("reader", "value"),
    [
        ("window", "abc"),
        ("window", "0"),
        ("window", "-1"),
        ("window", "1.5"),
        ("window", "²"),
        ("port", "abc"),
        ("port", "0"),
        ("port", "65536"),
        ("grace", "soon"),
        ("grace", "0"),
        ("lease", "2"),
        ("session", "0"),
        ("session", "10081"),
        ("session", "an hour"),
    ],
)
def test_a_malformed_numeric_setting_is_one_error_line_naming_the_variable_and_its_value(
    monkeypatch: pytest.MonkeyPatch, reader: str, value: str
) -> None:
    variable, read = READERS[reader]
    monkeypatch.setenv(variable, value)

    with pytest.raises(RunrecordError) as raised:
        read()

    assert str(raised.value).startswith(f"{variable}={value!r} is not ")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_an_unset_or_empty_numeric_setting_reads_its_default(
    monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    variable, read = READERS[reader]
    default = next(int(setting.default) for setting in settings.SETTINGS if setting.env == variable)
    monkeypatch.delenv(variable, raising=False)
    unset = read()
    monkeypatch.setenv(variable, "")

    assert (unset, read()) == (default, default)


def test_the_window_in_seconds_is_the_window_in_days(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNRECORD_WINDOW_DAYS", " 3 ")

    assert (settings.window_days(), settings.window_seconds()) == (3, 3 * DAY_S)


def test_no_module_reads_a_setting_with_int_or_float_around_settings_get() -> None:
    unvalidated = []
    for path in sorted([*REPO_ROOT.glob("jobs/**/*.py"), *REPO_ROOT.glob("dashboard/**/*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("int", "float")
                and any("settings.get(" in ast.unparse(argument) for argument in node.args)
            ):
                unvalidated.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")

    assert unvalidated == []


@pytest.mark.parametrize("target", sorted(JOBS.values()))
def test_every_scheduled_job_fails_on_a_malformed_window_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, target: str
) -> None:
    monkeypatch.setenv("RUNRECORD_WINDOW_DAYS", "abc")
    database = tmp_path / "installation.sqlite"

    with pytest.raises(RunrecordError) as raised:
        job_log.resolve(target)(f"sqlite:///{database}")

    assert job_log.failure_line(raised.value) == (
        "RUNRECORD_WINDOW_DAYS='abc' is not a whole number of days, from 1 to 3650"
    )
    assert not database.exists()


@pytest.mark.parametrize(
    ("value", "skills"),
    [
        ("missing_alt_text", {"missing_alt_text"}),
        (" missing_alt_text , image-check ,", {"missing_alt_text", "image-check"}),
        ("alt.text:v2", {"alt.text:v2"}),
    ],
)
def test_the_own_transcript_skills_are_a_comma_separated_list_of_identifiers(
    monkeypatch: pytest.MonkeyPatch, value: str, skills: set[str]
) -> None:
    monkeypatch.setenv("RUNRECORD_OWN_TRANSCRIPT_SKILLS", value)

    assert settings.own_transcript_skills() == skills


def test_the_own_transcript_skills_default_to_the_missing_alt_text_skill(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RUNRECORD_OWN_TRANSCRIPT_SKILLS", raising=False)

    assert settings.own_transcript_skills() == {"missing_alt_text"}


@pytest.mark.parametrize("value", ["alt text", "seo;DROP", ",", "a" * 101])
def test_an_own_transcript_skill_that_is_no_identifier_is_one_error_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("RUNRECORD_OWN_TRANSCRIPT_SKILLS", value)

    with pytest.raises(RunrecordError) as raised:
        settings.own_transcript_skills()

    assert str(raised.value).startswith(f"RUNRECORD_OWN_TRANSCRIPT_SKILLS={value!r} is not ")
    assert "\n" not in str(raised.value)


def test_an_administrator_session_secret_shorter_than_32_characters_is_refused_without_repeating_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNRECORD_ADMIN_SESSION_SECRET", "short-secret-4711")

    with pytest.raises(RunrecordError) as raised:
        settings.admin_session_secret()

    assert str(raised.value).startswith("RUNRECORD_ADMIN_SESSION_SECRET is too short: at least 32 characters")
    assert "short-secret-4711" not in str(raised.value)


@pytest.mark.parametrize(("value", "secret"), [(None, None), ("", None), ("  ", None), ("s" * 32, "s" * 32)])
def test_an_unset_administrator_session_secret_is_none_and_a_long_one_is_kept(
    monkeypatch: pytest.MonkeyPatch, value: str | None, secret: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("RUNRECORD_ADMIN_SESSION_SECRET", raising=False)
    else:
        monkeypatch.setenv("RUNRECORD_ADMIN_SESSION_SECRET", value)

    assert settings.admin_session_secret() == secret
