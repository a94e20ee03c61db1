"""The dashboard served by `runrecord dashboard` on a free port, and headless Chromium to open it.

Chromium is Debian's (/usr/bin/chromium), driven by Playwright's Python package with executable_path: no
browser is downloaded. Without either, the browser tests are skipped with the reason, except in CI (CI "true"
or "1"), where they fail: a CI run cannot pass without them.
"""

from __future__ import annotations

import os
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
from tests.browser.server import dashboard_server
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
SCREENSHOTS = REPO_ROOT / "docs" / "screenshots"


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
    with dashboard_server(url, work, NOW) as server:
        yield Served(server.base, url, demo, server.password, server.output, release)


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
