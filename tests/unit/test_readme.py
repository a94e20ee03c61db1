"""The README and its pages under docs/ document what a user can set and run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adapters.settings import SETTINGS
from core.metrics import DEFINITIONS, METRICS, Metric, MetricDefinition
from jobs.cli import main
from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {path.name: path.read_text(encoding="utf-8") for path in sorted((REPO_ROOT / "docs").glob("*.md"))}
EVERYTHING = "\n".join([README, *DOCS.values()])
RATES_HEADER = "| metric | numerator | denominator | excluded |"


def rates_table() -> dict[str, tuple[str, str, str]]:
    """The table of rates (docs/rates.md): metric name → numerator, denominator, excluded, as plain text (a
    code span's backticks are formatting, not wording)."""
    section = DOCS["rates.md"]
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
    first_cells = [line.split("|")[1] for line in DOCS["rates.md"].splitlines() if line.startswith("| `")]

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
    examples = EVERYTHING.split("$ runrecord compare ")[1:]

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


def test_every_page_under_docs_is_listed_in_the_readme() -> None:
    missing = [name for name in DOCS if f"(docs/{name})" not in README]

    assert missing == []


def test_every_link_between_the_pages_names_a_page_and_a_heading_that_exist() -> None:
    def slug(heading: str) -> str:
        return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")

    pages = {"README.md": README, **{f"docs/{name}": text for name, text in DOCS.items()}}
    headings = {
        page: {slug(m) for m in re.findall(r"(?m)^#{1,4} (.*)$", text)} for page, text in pages.items()
    }
    broken = []
    for page, text in pages.items():
        folder = Path(page).parent
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", text):
            linked = page if not target else str(folder / target).replace("docs/../", "")
            if anchor not in headings.get(linked, set()):
                broken.append(f"{page}: {target}#{anchor}")

    assert broken == []


def test_every_screenshot_a_page_shows_exists() -> None:
    pages = {REPO_ROOT / "README.md": README, **{REPO_ROOT / "docs" / n: t for n, t in DOCS.items()}}
    missing = [
        f"{path.name}: {image}"
        for path, text in pages.items()
        for image in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
        if not (path.parent / image).is_file()
    ]

    assert missing == []
