"""The demo's canary configuration: on the demo's 1,200 conversations and its SEO campaign, the canary is
edited significantly more than the stable one, told apart at 5 points, and earlier; its promotion is an
alert."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from core.time import DAY_S
from data.generate import campaign_tours, generate
from data.story import CANARY_CONFIGURATION, SEO_CONFIGURATION, SEO_SKILL
from jobs.demo import DEMO_CONVERSATIONS, DEMO_SEED
from jobs.schema_setup import init_installation
from tests.db.conftest import on_sqlite_alone
from tests.webhook_receiver import receiver

NOW = datetime(2026, 11, 29, tzinfo=UTC)
BETWEEN = ("--between", f"configuration:{SEO_CONFIGURATION}", f"configuration:{CANARY_CONFIGURATION}")
MARKS = ("1 h", "1 d", "2 d", "3 d", "5 d", "7 d")


@pytest.fixture
def posted() -> list[Any]:
    """The alerts the demo's measurement posted to its webhook."""
    return []


@pytest.fixture
def demo(
    empty_db_url: str,
    tmp_path: Path,
    run_cli: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
    posted: list[Any],
) -> Iterator[dict[str, Any]]:
    """The demo installation built for NOW, derived and measured with a webhook listening: its manifest."""
    manifest = tmp_path / "demo.manifest.json"
    generate(
        empty_db_url,
        create_tables=init_installation,
        conversations=DEMO_CONVERSATIONS,
        seed=DEMO_SEED,
        now=NOW,
        manifest=manifest,
    )
    now = NOW.isoformat()
    assert run_cli("derive-outcomes", "--db", empty_db_url, "--now", now).exit_code == 0
    with receiver(200) as endpoint:
        monkeypatch.setenv("RUNRECORD_ALERT_WEBHOOK", endpoint.url)
        assert run_cli("measure-rates", "--db", empty_db_url, "--now", now).exit_code == 0
    posted.extend(endpoint.bodies)
    yield json.loads(manifest.read_text(encoding="utf-8"))


# What the statistics make of the demo's 1,200 conversations does not depend on the database: that each
# dialect measures the same facts and rates is held by tests/db/test_measure_differential.py, and survival
# and the alerts by their own tests on every dialect. So the demo is built once, on SQLite.
@on_sqlite_alone
def test_on_the_demo_the_canary_is_edited_significantly_more_earlier_and_its_promotion_is_an_alert(
    demo: dict[str, Any], empty_db_url: str, run_cli: Callable[..., Result], posted: list[Any]
) -> None:
    now = NOW.isoformat()

    compared = run_cli("compare", "edited_rate", *BETWEEN, "--db", empty_db_url, "--now", now, "--json")
    alerts = run_cli("alerts", "--db", empty_db_url, "--json")
    survived = run_cli("survival", *BETWEEN, "--db", empty_db_url)
    survived_json = run_cli("survival", *BETWEEN, "--db", empty_db_url, "--json")

    canary, campaign = demo["canary"], demo["campaign"]
    since, promoted = date.fromisoformat(canary["since"]), date.fromisoformat(canary["promoted"])
    assert canary["configuration"] == CANARY_CONFIGURATION
    assert (NOW.date() - since).days in range(35, 42) and since.weekday() == 0
    assert promoted == since + timedelta(weeks=3)
    assert campaign["weeks"][0] == canary["since"] and campaign["weeks"][-1] == canary["promoted"]
    assert campaign["tours"] == campaign_tours(DEMO_CONVERSATIONS)

    assert compared.exit_code == 0, compared.output
    between = json.loads(compared.stdout)
    assert between["from"] == canary["since"] and between["periods"] == 4
    assert between["second"]["rate"] - between["first"]["rate"] > 0.5
    low, high = between["difference"]["newcombe_95"]
    assert (high - low) / 2 <= 0.05  # the "too few to tell" rule, literally
    assert between["difference"]["p_value"] < 0.0001
    assert between["difference"]["too_few_to_tell"] is False
    assert between["verdict"] == "significantly higher: worse"
    assert between["needed"]["per_side"] == 0

    assert alerts.exit_code == 0, alerts.output
    promotion = {
        alert["group"]: alert
        for alert in json.loads(alerts.stdout)
        if (alert["metric"], alert["kind"], alert["at"]) == ("edited_rate", "trend", canary["promoted"])
    }
    # The SEO check's EDITED rate rose in the week the canary took over nine in ten of its tours; each
    # configuration's own rate stayed what it was, so neither of them moved.
    assert {"all", f"skill:{SEO_SKILL}"} <= set(promotion)
    configurations = {f"configuration:{SEO_CONFIGURATION}", f"configuration:{CANARY_CONFIGURATION}"}
    assert not configurations & set(promotion)
    for alert in promotion.values():
        assert alert["difference"]["direction"] == "rise" and alert["difference"]["p_value"] < 0.0001
        assert alert["after"]["from"] == canary["promoted"]
        assert alert["before"]["from"] == (promoted - timedelta(weeks=4)).isoformat()
    # The webhook received each new alert, the promotion's among them.
    delivered = {(body["metric"], body["kind"], body["at"], body["group"]) for body in posted}
    assert {("edited_rate", "trend", canary["promoted"], group) for group in promotion} <= delivered
    assert len(posted) == len(json.loads(alerts.stdout))

    assert survived.exit_code == 0, survived.output
    lines = survived.output.splitlines()
    marks = [" ".join(line.split()[:2]) for line in lines]
    assert [mark for mark in marks if mark in MARKS] == [*MARKS, *MARKS]  # each curve's marks, in order
    medians = [line for line in lines if "median time to the first change" in line]
    assert medians[0].endswith("not reached (more than half untouched at 7 d, the window's end)")
    assert medians[1].split(": ")[1].endswith(" h")
    report = json.loads(survived_json.stdout)
    stable, canary_curve = report["curves"]
    assert stable["median_s"] is None and canary_curve["median_s"] < DAY_S
    assert report["log_rank"]["p_value"] < 0.05
