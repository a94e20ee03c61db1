"""The README documents what a user can set and run."""

from __future__ import annotations

from adapters.settings import SETTINGS
from core.measures import Metric
from jobs.cli import main
from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_documented_in_the_readme_with_its_default() -> None:
    missing = [s.env for s in SETTINGS if f"`{s.env}`" not in README or f"`{s.default}`" not in README]

    assert missing == []


def test_every_command_is_documented_in_the_readme() -> None:
    missing = [name for name in main.commands if f"runrecord {name}" not in README]

    assert missing == []


def test_every_metric_has_a_row_of_its_own_in_the_readme_table_of_rates() -> None:
    first_cells = [line.split("|")[1] for line in README.splitlines() if line.startswith("| `")]

    missing = [metric.value for metric in Metric if not any(f"`{metric.value}`" in c for c in first_cells)]

    assert missing == []


def test_the_readme_gives_the_two_commands_a_new_user_runs() -> None:
    assert "make demo" in README and "make test" in README and "runrecord demo" in README
