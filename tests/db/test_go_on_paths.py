"""What followed each stored "go on" while an approval waited (core.go_on), measured on SQLite, MariaDB and
PostgreSQL: the split into go_on_finished_outside, go_on_second_run and go_on_unknown, its line in
measure-rates' output, and the paths the demo generator plants on both sides of its release."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from click.testing import Result
from sqlalchemy import Engine, select

from adapters import schema
from adapters.database import make_engine
from core.metrics import Metric
from core.periods import Grain, period_start
from core.time import DAY_S
from data.builder import Installation
from data.chat import Conversation
from data.generate import generate
from data.records import Record
from jobs.measure import measure_rates
from jobs.schema_setup import init_installation
from tests.db.conftest import on_sqlite_alone

DAY = DAY_S
WINDOW = 7 * DAY
NOW = int(datetime(2026, 12, 2, 12, tzinfo=UTC).timestamp())  # a Wednesday
OLD = NOW - 40 * DAY  # a Friday in a week closed long ago
OLD_WEEK = period_start(OLD, Grain.WEEK)
SPLIT = (Metric.GO_ON_FINISHED_OUTSIDE, Metric.GO_ON_SECOND_RUN, Metric.GO_ON_UNKNOWN)


def _waiting(
    site: Installation, page: Record, at: int, configuration: str = "content-assistant"
) -> Conversation:
    chat = site.conversation(configuration=configuration, page=page, at=at)
    chat.user("Lege eine Unterseite an.", at=at)
    return chat


def _plant_every_path(site: Installation) -> None:
    """One stored "go on" of each path, and one sent after a decision without a line (not counted)."""
    page = site.page("Neuigkeiten", at=OLD - 30 * DAY)
    second = _waiting(site, page, OLD)  # before 001_: the message starts a second run
    run = second.run()
    run.propose("create_page_draft", page, fields=("title",))
    second.user("weiter", at=run.now + 400)
    again = second.run()
    again.propose("create_page_draft", page, fields=("title",))
    again.approve(at=again.now + 60)
    again.answer("Die Seite wurde angelegt.")
    again.finish()
    second.close()
    # Decided in AI Tasks, then the line, sent in the next week: it counts in the week of the run that waited.
    outside = _waiting(site, page, OLD + 3600)
    run = outside.run()
    run.propose("create_page_draft", page, fields=("title",))
    run.approve(at=run.now + 900)
    run.finish()
    line_at = run.now + 4 * DAY
    outside.user("habe alles freigegeben", at=line_at)
    outside.assistant("The run finished outside the chat.", at=line_at + 1, notice="runFinishedOutside")
    outside.close()
    unanswered = _waiting(site, page, OLD + 7200, configuration="seo-assistant")  # nothing answered it
    run = unanswered.run()
    run.propose("create_page_draft", page, fields=("title",))
    unanswered.user("go on", at=run.now + 400)
    unanswered.close()
    decided = _waiting(site, page, OLD + 10_800)  # after the decision, no line: not sent while it waited
    run = decided.run()
    run.propose("create_page_draft", page, fields=("title",))
    run.approve(at=run.now + 900)
    run.finish()
    decided.user("weiter", at=run.now + 30)
    decided.close()


def _split(engine: Engine, group: tuple[str, str] = ("all", "")) -> dict[Metric, tuple[int, int, int]]:
    r = schema.rate.c
    query = select(r.metric, r.numerator, r.denominator, r.excluded).where(
        r.grain == Grain.WEEK.value,
        r.period_start == OLD_WEEK,
        r.group_kind == group[0],
        r.group_value == group[1],
        r.metric.in_([metric.value for metric in SPLIT]),
    )
    with engine.connect() as connection:
        return {Metric(row[0]): (row[1], row[2], row[3]) for row in connection.execute(query)}


def test_each_stored_go_on_counts_by_what_followed_it_in_the_week_and_configuration_of_the_run_that_waited(
    installation_engine: Engine,
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection, seed=0)
        _plant_every_path(site)
        site.finish()

    measure_rates(installation_engine, now=NOW, window_s=WINDOW)

    assert _split(installation_engine) == {
        Metric.GO_ON_FINISHED_OUTSIDE: (1, 3, 0),
        Metric.GO_ON_SECOND_RUN: (1, 3, 0),
        Metric.GO_ON_UNKNOWN: (1, 3, 0),
    }
    assert _split(installation_engine, ("configuration", "seo-assistant"))[Metric.GO_ON_UNKNOWN] == (1, 1, 0)


def test_an_unreadable_user_message_while_an_approval_waits_is_excluded_from_the_split(
    installation_engine: Engine,
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection, seed=0)
        page = site.page("Neuigkeiten", at=OLD - 30 * DAY)
        chat = _waiting(site, page, OLD)
        run = chat.run()
        run.propose("create_page_draft", page, fields=("title",))
        chat.user("weiter", at=run.now + 400)
        chat.user("placeholder", at=run.now + 500)
        chat.messages[-1]["payload"] = "{not json"
        chat.close()
        site.finish()

    measure_rates(installation_engine, now=NOW, window_s=WINDOW)

    assert _split(installation_engine)[Metric.GO_ON_UNKNOWN] == (1, 1, 1)


@on_sqlite_alone
def test_the_command_prints_the_split_in_one_line(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection, seed=0)
        _plant_every_path(site)
        site.finish()

    now = datetime.fromtimestamp(NOW, UTC).isoformat()

    result = run_cli("measure-rates", "--db", installation_url, "--now", now)

    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.output.splitlines() if line.strip().startswith('"go on"')]
    assert lines == [
        '"go on" while an approval waited: 3 stored messages: runFinishedOutside line 1 (33.3%), '
        "second run 1 (33.3%), neither 1 (33.3%)"
    ]


@on_sqlite_alone
def test_the_json_summary_gives_the_split_by_path(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection, seed=0)
        _plant_every_path(site)
        site.finish()
    now = datetime.fromtimestamp(NOW, UTC).isoformat()

    result = run_cli("measure-rates", "--db", installation_url, "--now", now, "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["go_on_paths"] == {
        "messages": 3,
        "excluded": 0,
        "finished_outside": 1,
        "second_run": 1,
        "unknown": 1,
    }


DEMO_NOW = datetime(2026, 12, 1, tzinfo=UTC)
# Enough conversations for a few "go on" conversations on each side of the release (5% are one).
DEMO_CONVERSATIONS = 400


def _sides(engine: Engine, released: date) -> dict[Metric, tuple[int, int]]:
    """Each path's numerator in the weeks wholly before the release and in those from it, all runs summed;
    the week that holds the release day without starting on it is on neither side."""
    r = schema.rate.c
    query = select(r.metric, r.period_start, r.numerator).where(
        r.grain == Grain.WEEK.value, r.group_kind == "all", r.metric.in_([metric.value for metric in SPLIT])
    )
    found = {metric: [0, 0] for metric in SPLIT}
    with engine.connect() as connection:
        for metric, start, numerator in connection.execute(query):
            week = start if isinstance(start, date) else date.fromisoformat(str(start))
            if week + timedelta(days=7) <= released:
                found[Metric(metric)][0] += int(numerator)
            elif week >= released:
                found[Metric(metric)][1] += int(numerator)
    return {metric: (before, after) for metric, (before, after) in found.items()}


@on_sqlite_alone
def test_the_demo_plants_second_runs_before_its_release_and_the_other_two_paths_after_it(
    empty_db_url: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "demo.manifest.json"
    generate(
        empty_db_url,
        create_tables=init_installation,
        conversations=DEMO_CONVERSATIONS,
        seed=1,
        now=DEMO_NOW,
        manifest=manifest,
    )
    released = date.fromisoformat(json.loads(manifest.read_text(encoding="utf-8"))["release"]["date"])
    engine = make_engine(empty_db_url)
    try:
        measure_rates(engine, now=int(DEMO_NOW.timestamp()), window_s=WINDOW)
        sides = _sides(engine, released)
    finally:
        engine.dispose()

    outside, second, unknown = (sides[metric] for metric in SPLIT)
    assert second[0] > 0 and second[1] == 0
    assert outside[0] == 0 and outside[1] > 0
    assert unknown[0] == 0 and unknown[1] > 0
