"""The README documents what a user can set and run."""

from __future__ import annotations

import pytest

from adapters.settings import SETTINGS
from core.metrics import DEFINITIONS, METRICS, Metric, MetricDefinition
from jobs.cli import main
from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
RATES_HEADER = "| metric | numerator | denominator | excluded |"


def rates_table() -> dict[str, tuple[str, str, str]]:
    """The README's table of rates ("Rates and releases"): metric name → numerator, denominator, excluded, as
    plain text (a code span's backticks are formatting, not wording)."""
    section = README[README.index("## Rates and releases") :]
    lines = section[section.index(RATES_HEADER) :].splitlines()[2:]
    rows: dict[str, tuple[str, str, str]] = {}
    for line in lines:
        if not line.startswith("|"):
            break
        name, numerator, denominator, excluded = (
            cell.strip().replace("`", "") for cell in line.split("|")[1:5]
        )
        rows[name] = (numerator, denominator, excluded)
    return rows


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


def test_the_readme_table_of_rates_names_exactly_the_metrics_of_the_registry() -> None:
    assert list(rates_table()) == [definition.metric.value for definition in METRICS]


@pytest.mark.parametrize("definition", METRICS, ids=lambda definition: definition.metric.value)
def test_each_readme_row_of_rates_gives_the_registrys_wording(definition: MetricDefinition) -> None:
    row = rates_table().get(definition.metric.value)

    assert row == (definition.numerator, definition.denominator, definition.excluded)


def test_every_readme_compare_example_prints_the_registrys_definition() -> None:
    examples = README.split("$ runrecord compare ")[1:]

    assert len(examples) >= 2  # --at and --between
    for example in examples:
        block = example[: example.index("```")]
        printed = {
            line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
            for line in block.splitlines()
            if line.startswith(("  numerator:", "  denominator:", "  excluded:"))
        }
        definition = DEFINITIONS[Metric(block.split()[0])]
        assert printed == {
            "numerator": definition.numerator,
            "denominator": definition.denominator,
            "excluded": definition.excluded,
        }
