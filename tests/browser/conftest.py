"""The dashboard served by `runrecord dashboard` on a free port, and headless Chromium to open it.

Chromium is Debian's (/usr/bin/chromium), driven by Playwright's Python package with executable_path: no
browser is downloaded. Without either, the browser tests are skipped with the reason, except in CI (CI "true"
or "1"), where they fail: a CI run cannot pass without them.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from adapters.database import parse_url
from data.generate import default_manifest, generate
from jobs.demo import DEMO_CONVERSATIONS, DEMO_SEED
from jobs.schema_setup import init_installation
from tests.app.installations import measured_copy
from tests.conftest import NOW, REPO_ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVE_TIMEOUT_S = 90
SCREENSHOTS = REPO_ROOT / "docs" / "screenshots"
PASSWORD_LINE = re.compile(r"^administrator password: (\S+)$")


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def _unavailable(reason: str) -> None:
    if _in_ci():
        pytest.fail(f"browser tests cannot run in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """A headless Debian Chromium, launched once per session through Playwright."""
    if not CHROMIUM.exists():
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass(frozen=True)
class Served:
    base: str
    database: str
    demo: str  # the demo installation as generated, beside its manifest (the measured copy is `database`)
    password: str
    output: list[str]
    release: date


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _runrecord() -> list[str]:
    script = Path(sys.executable).parent / "runrecord"
    return [str(script)] if script.exists() else [sys.executable, "-m", "jobs.cli"]


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`runrecord dashboard --port N` on the measured demo installation, and its one-time password."""
    work = tmp_path_factory.mktemp("browser")
    demo = f"sqlite:///{work / 'demo.sqlite'}"
    generate(
        demo,
        create_tables=init_installation,
        conversations=DEMO_CONVERSATIONS,
        seed=DEMO_SEED,
        now=NOW,
        manifest=default_manifest(parse_url(demo)),
    )
    url, release = measured_copy(demo, work / "measured.sqlite", NOW)
    port = _free_port()
    environment = {key: value for key, value in os.environ.items() if not key.startswith("RUNRECORD_")}
    # No secrets.toml: the password sign-in.
    environment |= {"RUNRECORD_DB": url, "RUNRECORD_NOW": NOW.isoformat(), "HOME": str(work)}
    server = subprocess.Popen(
        [*_runrecord(), "dashboard", "--port", str(port)],
        cwd=work,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    password = ""
    assert server.stdout is not None
    for line in server.stdout:
        output.append(line.rstrip("\n"))
        found = PASSWORD_LINE.match(output[-1])
        if found:
            password = found.group(1)
            break
    drain = threading.Thread(target=lambda: output.extend(line.rstrip("\n") for line in server.stdout or ()))
    drain.start()
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(base, server)
        yield Served(base, url, demo, password, output, release)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        drain.join(timeout=10)


def _wait_for(base: str, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + SERVE_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"runrecord dashboard exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as answer:
                if answer.read().decode() == "ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"the dashboard did not answer on {base} within {SERVE_TIMEOUT_S} s")


def updating_screenshots() -> bool:
    """Whether this run saves the README's screenshots (RUNRECORD_UPDATE_SCREENSHOTS=1). A full-page shot
    of a tall page costs seconds and asserts nothing, so other runs take none and leave the checkout as it
    was."""
    return os.environ.get("RUNRECORD_UPDATE_SCREENSHOTS") == "1"


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the screenshots are saved: docs/screenshots, the README's."""
    if updating_screenshots():
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
