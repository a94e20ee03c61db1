"""The demo's canary configuration: on the demo's 1,200 conversations it edits significantly more than the
stable one, and earlier, as compare --between and survival --between report it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from click.testing import Result

from core.time import DAY_S
from data.generate import generate
from data.scenarios import CANARY_CONFIGURATION, SEO_CONFIGURATION
from jobs.demo import DEMO_CONVERSATIONS, DEMO_SEED
from jobs.schema_setup import init_installation

NOW = datetime(2026, 11, 29, tzinfo=UTC)
BETWEEN = ("--between", f"configuration:{SEO_CONFIGURATION}", f"configuration:{CANARY_CONFIGURATION}")


def test_on_the_demo_the_canary_is_edited_significantly_more_and_earlier_than_the_stable_configuration(
    empty_db_url: str, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
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
    assert run_cli("measure-rates", "--db", empty_db_url, "--now", now).exit_code == 0

    compared = run_cli("compare", "edited_rate", *BETWEEN, "--db", empty_db_url, "--now", now, "--json")
    survived = run_cli("survival", *BETWEEN, "--db", empty_db_url, "--json")

    planted = json.loads(manifest.read_text(encoding="utf-8"))["canary"]
    assert planted["configuration"] == CANARY_CONFIGURATION
    assert (NOW.date() - datetime.fromisoformat(planted["since"]).date()).days in range(35, 42)
    assert compared.exit_code == 0, compared.output
    between = json.loads(compared.stdout)
    assert between["periods"] >= 4
    assert between["second"]["rate"] - between["first"]["rate"] > 0.3
    assert between["difference"]["p_value"] < 0.05
    # About 30 runs a side in four weeks cannot narrow the interval to ±5 points (README, "Configuration
    # against configuration"): the verdict says so, and how many more each side needs.
    assert between["verdict"] == "too few to tell"
    needed = between["needed"]
    assert needed["per_side"] > max(needed["first"]["have"], needed["second"]["have"])
    assert needed["first"]["weeks"] > 0 and needed["second"]["weeks"] > 0
    assert survived.exit_code == 0, survived.output
    stable, canary = json.loads(survived.stdout)["curves"]
    assert stable["median_s"] is None and canary["median_s"] < DAY_S
    assert json.loads(survived.stdout)["log_rank"]["p_value"] < 0.05
