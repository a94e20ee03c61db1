"""compare's three verdicts on the command line, on SQLite, MariaDB and PostgreSQL: significant with a wide
interval, no difference within ±5 points, too few to tell; each side printed with its Wilson interval."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

import pytest
from click.testing import Result
from sqlalchemy import Engine
from statsmodels.stats.proportion import proportion_confint

from core.periods import Grain
from core.rates import Proportion, method_name
from core.sample_size import runs_per_side
from core.time import DAY_S
from data.builder import Installation
from jobs.measure import measure_rates

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
RELEASE = date(2026, 11, 2)  # a Monday: one week before it (10-26) and one from it, both closed at NOW
CLAIM = "Erledigt, die Überschrift ist gespeichert."
NO_CLAIM = "Ein Vorschlag: Sommerangebote."


def unix(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


def plant(engine: Engine, before: tuple[int, int], after: tuple[int, int]) -> None:
    """(answers claiming an unwritten change, answers) in the week before RELEASE and the week from it."""
    with engine.begin() as connection:
        site = Installation(connection)
        for monday, (claims, count) in ((RELEASE - timedelta(weeks=1), before), (RELEASE, after)):
            for n in range(count):
                at = unix(monday) + n * (5 * DAY_S // count)
                chat = site.conversation(configuration="content-assistant", at=at)
                chat.user("Ändere die Überschrift.", at=at)
                run = chat.run()
                run.llm("get_page")
                run.tool("get_page")
                run.answer(CLAIM if n < claims else NO_CLAIM)
                run.finish()
                chat.close()
        site.finish()
    measure_rates(engine, now=int(NOW.timestamp()), window_s=7 * DAY_S, grains=(Grain.WEEK,))


def compared(run_cli: Callable[..., Result], url: str, *more: str) -> Result:
    return run_cli(
        "compare",
        "claimed_unwritten_rate",
        "--at",
        RELEASE.isoformat(),
        "--weeks",
        "1",
        "--db",
        url,
        "--now",
        NOW.isoformat(),
        *more,
    )


def wilson_text(numerator: int, denominator: int) -> str:
    low, high = proportion_confint(numerator, denominator, alpha=0.05, method="wilson")
    return f"95% CI {low * 100:.1f}% – {high * 100:.1f}%"


# (before, after, verdict, why)
VERDICTS = [
    ((39, 120), (63, 120), "rose significantly: worse", "significant with a wide interval"),
    ((0, 100), (0, 100), "no difference of 5 points or more", "no difference within ±5"),
    ((4, 20), (5, 20), "too few to tell", "too few to tell"),
]


@pytest.mark.parametrize(
    ("before", "after", "verdict"), [row[:3] for row in VERDICTS], ids=[row[3] for row in VERDICTS]
)
def test_compare_prints_each_verdict_with_both_sides_and_their_wilson_intervals(
    installation_engine: Engine,
    installation_url: str,
    run_cli: Callable[..., Result],
    before: tuple[int, int],
    after: tuple[int, int],
    verdict: str,
) -> None:
    plant(installation_engine, before, after)

    result = compared(run_cli, installation_url)
    document = json.loads(compared(run_cli, installation_url, "--json").output)

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    before_line = next(line for line in lines if line.startswith("  before"))
    after_line = next(line for line in lines if line.startswith("  after"))
    assert f": {before[0]} / {before[1]} = " in before_line and wilson_text(*before) in before_line
    assert f": {after[0]} / {after[1]} = " in after_line and wilson_text(*after) in after_line
    assert f"  → {verdict}" in lines
    assert document["verdict"] == verdict
    low, high = document["difference"]["newcombe_95"]
    assert document["difference"]["test"] == method_name(Proportion(*before), Proportion(*after))
    if verdict == "rose significantly: worse":
        assert document["difference"]["p_value"] < 0.05 and (high - low) / 2 > 0.05
    else:
        assert document["difference"]["p_value"] >= 0.05
        assert (low >= -0.05 and high <= 0.05) is (verdict != "too few to tell")


@pytest.mark.parametrize(
    ("before", "after", "verdict"), [row[:3] for row in VERDICTS], ids=[row[3] for row in VERDICTS]
)
def test_compare_at_says_the_runs_and_weeks_each_side_needs_only_when_too_few_to_tell(
    installation_engine: Engine,
    installation_url: str,
    run_cli: Callable[..., Result],
    before: tuple[int, int],
    after: tuple[int, int],
    verdict: str,
) -> None:
    plant(installation_engine, before, after)

    result = compared(run_cli, installation_url)
    document = json.loads(compared(run_cli, installation_url, "--json").output)

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    if verdict != "too few to tell":
        assert not any("each side needs" in line for line in lines)
        assert document["needed"]["per_side"] == 0
        return
    per_side = runs_per_side(before[0] / before[1], after[0] / after[1])
    more = per_side - 20
    weeks = -(-more // 20)  # each side's one week held 20 answers
    assert lines[lines.index("  → too few to tell") + 1 :][:3] == [
        "  to tell a 5-point difference apart at these rates, each side needs "
        f"{per_side:,} in its denominator:",
        f"    before has 20: {more:,} more, about {weeks:,} weeks at its 20 a week",
        f"    after has 20: {more:,} more, about {weeks:,} weeks at its 20 a week",
    ]
    assert document["needed"] == {
        "per_side": per_side,
        "first": {"have": 20, "more": more, "weekly": 20, "weeks": weeks},
        "second": {"have": 20, "more": more, "weekly": 20, "weeks": weeks},
    }
