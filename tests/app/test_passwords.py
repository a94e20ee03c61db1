"""The administrator password: stored as a PBKDF2-SHA256 hash, compared in constant time, never kept plain."""

from __future__ import annotations

import hmac
import os
import pty
import select
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from adapters import passwords
from adapters.passwords import (
    ITERATIONS,
    MIN_ITERATIONS,
    PasswordHashError,
    hash_password,
    parse_hash,
    verify_password,
)
from jobs.cli import main
from tests.conftest import REPO_ROOT


def test_a_hash_has_the_form_algorithm_iterations_salt_hash_and_verifies_its_password() -> None:
    stored = hash_password("geheim", iterations=MIN_ITERATIONS)

    algorithm, iterations, salt, digest = stored.split("$")
    assert (algorithm, int(iterations)) == ("pbkdf2_sha256", MIN_ITERATIONS)
    assert salt and digest and "geheim" not in stored
    assert verify_password("geheim", stored)
    assert not verify_password("Geheim", stored)
    assert not verify_password("", stored)


def test_two_hashes_of_one_password_differ_by_their_salt() -> None:
    assert hash_password("geheim", iterations=MIN_ITERATIONS) != hash_password(
        "geheim", iterations=MIN_ITERATIONS
    )


def test_the_default_follows_owasp_s_600000_iterations() -> None:
    assert ITERATIONS == 600_000
    assert parse_hash(hash_password("geheim"))[0] == ITERATIONS


def test_the_comparison_is_hmac_compare_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    original = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return original(a, b)

    monkeypatch.setattr(passwords.hmac, "compare_digest", spy)

    assert verify_password("geheim", hash_password("geheim", iterations=MIN_ITERATIONS))
    assert len(calls) == 1


@pytest.mark.parametrize(
    "stored",
    [
        "",
        "geheim",
        "md5$1$abc$def",
        "pbkdf2_sha256$abc$c2FsdA$aGFzaA",
        "pbkdf2_sha256$1000$c2FsdA$" + "A" * 43,  # too few iterations to be a password check
        "pbkdf2_sha256$600000$$" + "A" * 43,
        "pbkdf2_sha256$600000$c2FsdA$c2hvcnQ",
        "pbkdf2_sha256$600000$!!$" + "A" * 43,
    ],
)
def test_a_stored_value_that_is_not_a_usable_hash_is_refused(stored: str) -> None:
    with pytest.raises(PasswordHashError):
        verify_password("geheim", stored)


def test_an_empty_password_cannot_be_hashed() -> None:
    with pytest.raises(PasswordHashError):
        hash_password("")


def test_hash_password_prints_a_hash_that_verifies_and_never_the_password() -> None:
    result = CliRunner().invoke(main, ["hash-password"], input="s3cret-Passwort\ns3cret-Passwort\n")

    assert result.exit_code == 0, result.output
    stored = result.stdout.strip().splitlines()[-1]
    assert stored.startswith("pbkdf2_sha256$600000$")
    assert verify_password("s3cret-Passwort", stored)
    assert "s3cret-Passwort" not in result.stdout
    assert "RUNRECORD_ADMIN_PASSWORD_HASH" in result.stderr


@pytest.mark.parametrize(
    ("line", "said"), [("\n", "an empty password"), ("   \t\n", "a password of white space alone")]
)
def test_hash_password_refuses_an_empty_or_blank_password(line: str, said: str) -> None:
    result = CliRunner().invoke(main, ["hash-password", "--password-stdin"], input=line)

    assert result.exit_code == 1
    assert result.stderr == f"runrecord: error: {said} cannot be an administrator password\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--password-stdin",), "no password given: stdin is empty (--password-stdin reads the password"),
        ((), "no password given (hash-password asks for it twice; --password-stdin reads it"),
    ],
    ids=["stdin", "asked"],
)
def test_hash_password_with_no_password_to_read_is_refused_in_one_line(
    args: tuple[str, ...], said: str
) -> None:
    result = CliRunner().invoke(main, ["hash-password", *args], input="")

    assert result.exit_code == 1
    assert result.stderr.startswith(f"runrecord: error: {said}") and result.stderr.count("\n") == 1
    assert "pbkdf2_sha256" not in result.stdout


def test_hash_password_without_a_terminal_to_ask_on_is_refused_in_one_line() -> None:
    # A session of its own has no controlling terminal: getpass could only read stdin, the password shown.
    finished = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "hash-password"],
        cwd=REPO_ROOT,
        input="s3cret-Passwort\ns3cret-Passwort\n",
        capture_output=True,
        text=True,
        start_new_session=True,
    )

    assert finished.returncode == 1
    assert finished.stderr == (
        "runrecord: error: no terminal to ask for the password on: give it on the first line of stdin with "
        "--password-stdin\n"
    )
    assert finished.stdout == ""


@pytest.mark.parametrize(
    ("args", "given"),
    [(("--password-stdin",), b"geh\xffeim\n"), ((), b"geh\xffeim\ngeh\xffeim\n")],
    ids=["stdin", "asked"],
)
def test_a_password_that_is_not_utf8_is_refused_in_one_line(args: tuple[str, ...], given: bytes) -> None:
    result = CliRunner().invoke(main, ["hash-password", *args], input=given)

    assert result.exit_code == 1
    assert result.stderr == "runrecord: error: the password is not UTF-8 text\n"
    assert "pbkdf2_sha256" not in result.stdout


def test_a_byte_order_mark_before_a_password_on_stdin_is_no_part_of_it() -> None:
    result = CliRunner().invoke(main, ["hash-password", "--password-stdin"], input=b"\xef\xbb\xbfs3cret\r\n")

    assert result.exit_code == 0, result.output
    assert verify_password("s3cret", result.stdout.strip())


def test_a_typed_password_that_is_not_utf8_is_refused_on_a_line_of_its_own_below_the_prompt() -> None:
    # The command runs on a pseudo-terminal of its own, as its controlling terminal: getpass asks there.
    controller, command = _hash_password_on_a_terminal_of_its_own()
    shown = _read_until(controller, b"password: ")
    os.write(controller, b"geh\xffeim\n")
    shown += _read_to_the_end(controller)
    ended = _ended(command, controller)

    assert ended == 1
    assert shown == b"Administrator password: \r\nrunrecord: error: the password is not UTF-8 text\r\n"


def test_a_command_stopped_by_sigterm_says_so_in_one_line_and_exits_143() -> None:
    # hash-password waits at its prompt: a command caught in the middle of its work, as SIGTERM finds one.
    controller, command = _hash_password_on_a_terminal_of_its_own()
    shown = _read_until(controller, b"password: ")
    command.send_signal(signal.SIGTERM)
    shown += _read_to_the_end(controller)
    ended = _ended(command, controller)

    assert ended == 128 + signal.SIGTERM
    assert shown.split(b"\r\n")[1:] == [
        b"runrecord: stopped (SIGTERM) before runrecord hash-password finished; what it had committed stays, "
        b"the rest was not kept",
        b"",
    ]


def _hash_password_on_a_terminal_of_its_own() -> tuple[int, subprocess.Popen[bytes]]:
    """hash-password on a pseudo-terminal that is its controlling terminal: the terminal's controller side,
    and the command."""
    controller, terminal = pty.openpty()
    on_the_terminal = (
        "import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
        "os.execv(sys.executable, [sys.executable, '-m', 'jobs.cli', 'hash-password'])"
    )
    command = subprocess.Popen(
        [sys.executable, "-c", on_the_terminal],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=REPO_ROOT,
    )
    os.close(terminal)
    return controller, command


def _ended(command: subprocess.Popen[bytes], controller: int) -> int:
    """The command's exit code, the terminal closed only after it: closing a terminal first hangs up on a
    command that is still ending (SIGHUP, whatever code it was about to exit with)."""
    try:
        return command.wait(timeout=30)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
        os.close(controller)


def _read_until(controller: int, wanted: bytes) -> bytes:
    shown = b""
    while wanted not in shown:
        ready, _, _ = select.select([controller], [], [], 30)
        assert ready, f"the terminal showed {shown!r}, not {wanted!r}"
        shown += os.read(controller, 1024)
    return shown


def _read_to_the_end(controller: int) -> bytes:
    shown = b""
    while select.select([controller], [], [], 30)[0]:
        try:
            chunk = os.read(controller, 1024)
        except OSError:  # EIO: the command has ended and closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    return shown
