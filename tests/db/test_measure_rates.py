"""measure-rates end to end, on SQLite, MariaDB and PostgreSQL: facts, rates, reruns and privacy.

Every installation is written with the builder (or the demo generator); rates are read back from
tx_runrecord_rate.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from sqlalchemy import Engine, delete, event, func, insert, select, update

from adapters import clock, measure_marks, schema, tallies
from adapters.database import make_engine
from core.counting import Count
from core.facts import MEASURE_VERSION
from core.measured_runs import run_end
from core.metrics import RATES_VERSION, Metric
from core.periods import Grain, is_open, period_start, unix_of
from core.time import DAY_S
from data.agent_run import Run
from data.builder import Installation
from data.generate import generate
from data.scenarios import seo_tour_story
from data.story import EDITORS, Story, Writer
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from jobs.measure_summary import Summary, summary_lines
from jobs.schema_setup import init_installation
from tests.db.conftest import on_sqlite_alone
from tests.older_marks import left_by_an_older_runrecord

DAY = DAY_S
WINDOW = 7 * DAY
NOW = int(datetime(2026, 12, 2, 12, tzinfo=UTC).timestamp())  # a Wednesday
OLD = NOW - 40 * DAY  # a week closed long ago
OLD_WEEK = period_start(OLD, Grain.WEEK)
OPEN_WEEK = period_start(NOW, Grain.WEEK)
# Editor ids are never selected, and no query names these columns (DESIGN.md, "Privacy").
EDITOR_COLUMNS = ("be_user", "userid", "decidedby", "submittedby")

Key = tuple[str, date, str, str]


# --- building -----------------------------------------------------------------------------------------------


@contextmanager
def installation(engine: Engine, seed: int = 0) -> Iterator[Installation]:
    """An installation written with the builder, in one transaction; a second one into the same database
    takes another seed, or its run uuids would repeat the first one's."""
    with engine.begin() as connection:
        site = Installation(connection, seed=seed)
        yield site
        site.finish()


def talk(
    site: Installation,
    at: int,
    answer: str,
    *,
    configuration: str = "content-assistant",
    skill: str = "",
) -> Run:
    """A turn that reads a page and answers without writing."""
    chat = site.conversation(configuration=configuration, skill=skill, at=at)
    chat.user("Kannst du die Überschrift ändern?", at=at)
    run = chat.run()
    run.llm("get_page")
    run.tool("get_page")
    run.answer(answer)
    run.finish()
    chat.close()
    return run


def edit(site: Installation, at: int, answer: str = "Erledigt: der Titel ist gespeichert.") -> Run:
    """A turn that proposes a write, is approved and answers."""
    page = site.page("Produkte", at=at - 30 * DAY)
    chat = site.conversation(configuration="seo-assistant", skill="seo-check", page=page, at=at)
    chat.user("Setze einen neuen Seitentitel.", at=at)
    run = chat.run()
    run.propose("update_page_seo", page, fields=("seo_title",))
    run.approve(at=at + 60)
    run.answer(answer)
    run.finish()
    chat.close()
    return run


def measure(engine: Engine, *, now: int = NOW, grains: tuple[Grain, ...] = (Grain.WEEK,)) -> Summary:
    return measure_rates(engine, now=now, window_s=WINDOW, grains=grains)


def rates(engine: Engine, grain: Grain = Grain.WEEK) -> dict[Key, tuple[int, int, int]]:
    r = schema.rate.c
    query = select(
        r.metric, r.period_start, r.group_kind, r.group_value, r.numerator, r.denominator, r.excluded
    ).where(r.grain == grain.value)
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    return {(row[0], _day(row[1]), row[2], row[3]): (row[4], row[5], row[6]) for row in rows}


def _day(value: object) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


def facts_of_earlier_rules(engine: Engine) -> None:
    """Mark the stored facts as counted under the version of the rules before today's."""
    m = schema.measure_mark.c
    older = ("version", "measure_version_week", "measure_version_day")
    with engine.begin() as connection:
        connection.execute(
            update(schema.measure_mark).where(m.name.in_(older)).values(value=MEASURE_VERSION - 1)
        )


def rate(engine: Engine, metric: Metric, week: date, group: tuple[str, str] = ("all", "")) -> tuple[int, ...]:
    return rates(engine)[(metric.value, week, *group)]


# --- what is counted ----------------------------------------------------------------------------------------


def test_claims_the_run_never_made_are_counted_over_every_completed_answer(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt! Ich habe die Überschrift geändert.")
        talk(site, OLD + 3600, "Der Seitentitel wurde aktualisiert und gespeichert.")
        talk(site, OLD + 7200, "Ich schlage vor, den Titel kürzer zu fassen.")
        edit(site, OLD + 9000)

    measure(installation_engine)

    assert rate(installation_engine, Metric.CLAIMED_UNWRITTEN_RATE, OLD_WEEK) == (2, 4, 0)
    assert rate(installation_engine, Metric.NOTHING_SAVED_RATE, OLD_WEEK) == (0, 4, 0)
    assert rate(installation_engine, Metric.RUNS, OLD_WEEK) == (4, 4, 0)


def test_the_nothing_saved_notice_the_chat_stored_is_counted_as_stored(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        chat = site.conversation(configuration="content-assistant", at=OLD)
        chat.user("Ändere den Teaser.", at=OLD)
        run = chat.run()
        run.llm("get_content")
        run.tool("get_content")
        run.answer("Erledigt.", notice="nothingSaved")
        run.finish()
        chat.close()
        talk(site, OLD + 60, "Hier ist ein Vorschlag.")

    measure(installation_engine)

    assert rate(installation_engine, Metric.NOTHING_SAVED_RATE, OLD_WEEK) == (1, 2, 0)
    assert rate(installation_engine, Metric.CLAIMED_UNWRITTEN_RATE, OLD_WEEK) == (1, 2, 0)


def test_rates_are_grouped_by_configuration_and_skill_and_a_skill_less_conversation_is_its_own_group(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.", configuration="content-assistant")
        edit(site, OLD + 600)

    measure(installation_engine)
    found = rates(installation_engine)

    assert found[("claimed_unwritten_rate", OLD_WEEK, "configuration", "content-assistant")] == (1, 1, 0)
    assert found[("claimed_unwritten_rate", OLD_WEEK, "configuration", "seo-assistant")] == (0, 1, 0)
    assert found[("claimed_unwritten_rate", OLD_WEEK, "skill", "")] == (1, 1, 0)
    assert found[("claimed_unwritten_rate", OLD_WEEK, "skill", "seo-check")] == (0, 1, 0)
    assert {kind for _, _, kind, _ in found} == {"all", "configuration", "skill"}


def test_a_week_without_runs_has_no_rate_never_zero(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")
        talk(site, OLD + 14 * DAY, "Erledigt.")

    measure(installation_engine)
    weeks = {period for _, period, _, _ in rates(installation_engine)}

    assert OLD_WEEK in weeks and period_start(OLD + 14 * DAY, Grain.WEEK) in weeks
    assert period_start(OLD + 7 * DAY, Grain.WEEK) not in weeks


def test_a_day_grain_writes_the_same_facts_by_day(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")
        talk(site, OLD + DAY, "Alles klar.")

    measure(installation_engine, grains=(Grain.DAY,))
    found = rates(installation_engine, Grain.DAY)

    assert found[("claimed_unwritten_rate", period_start(OLD, Grain.DAY), "all", "")] == (1, 1, 0)
    assert found[("claimed_unwritten_rate", period_start(OLD + DAY, Grain.DAY), "all", "")] == (0, 1, 0)


def test_a_grains_closed_periods_are_those_of_the_facts_before_its_own_first_open_period(
    installation_engine: Engine,
) -> None:
    monday = OPEN_WEEK
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")
        talk(site, unix_of(monday) + 3600, "Alles klar.")
    measure(installation_engine)

    first_open = {Grain.WEEK: monday, Grain.DAY: monday + timedelta(days=2)}  # the Wednesday of `now`
    with installation_engine.connect() as connection:
        closed = tallies.closed_periods(connection, first_open)

    assert closed == {Grain.WEEK: {OLD_WEEK}, Grain.DAY: {period_start(OLD, Grain.DAY), monday}}


def test_derived_outcomes_are_rated_in_the_week_of_the_runs_end_with_unknown_beside_them(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        kept = edit(site, OLD)
        edited = edit(site, OLD + 600)
        site.human_edit(edited.writes[0].record, {"seo_title": "von Hand"}, at=OLD + 2 * DAY)
        trimmed = edit(site, OLD + 1200)
    with installation_engine.begin() as connection:  # one write's history is gone: unknown
        h = schema.sys_history.c
        connection.execute(
            schema.sys_history.delete().where(
                h.recuid == trimmed.writes[0].record.uid, h.tablename == "pages"
            )
        )
    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    measure(installation_engine)

    assert kept.writes and rate(installation_engine, Metric.EDITED_RATE, OLD_WEEK)[:2] == (1, 2)
    assert rate(installation_engine, Metric.UNKNOWN_SHARE, OLD_WEEK) == (1, 3, 0)
    assert rate(installation_engine, Metric.EDITED_SAME_FIELDS, OLD_WEEK) == (1, 1, 0)


def test_go_on_while_an_approval_waits_is_counted_once_per_conversation(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = site.page("Neuigkeiten", at=OLD - 30 * DAY)
        waiting = site.conversation(configuration="content-assistant", page=page, at=OLD)
        waiting.user("Lege eine Unterseite an.", at=OLD)
        run = waiting.run()
        run.propose("create_page_draft", page, fields=("title",))
        waiting.user("weiter", at=run.now + 400)  # the approval still waits: "go on"
        again = waiting.run()
        again.propose("create_page_draft", page, fields=("title",))
        again.approve(at=again.now + 60)
        again.answer("Die Seite wurde angelegt.")
        again.finish()
        waiting.close()
        decided = site.conversation(configuration="content-assistant", page=page, at=OLD + 3600)
        decided.user("Lege eine Unterseite an.", at=OLD + 3600)
        later = decided.run()
        later.propose("create_page_draft", page, fields=("title",))
        later.approve(at=later.now + 900)
        later.finish()
        decided.user("habe alles freigegeben", at=later.now + 30)  # after the decision: not "go on"
        decided.close()

    measure(installation_engine)

    assert rate(installation_engine, Metric.GO_ON_WHILE_WAITING, OLD_WEEK) == (1, 2, 0)


def test_the_story_of_000_counts_as_a_denial_of_earlier_work(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        story = Story.around(NOW, window_s=WINDOW)
        seo_tour_story(Writer(site, story, random.Random(1), NOW - 20 * DAY))

    measure(installation_engine)
    found = {key: value for key, value in rates(installation_engine).items() if key[0] == "denial_rate"}

    # The tour's own answer follows five earlier writes and claims them; the later question denies them.
    assert [value for (_, _, kind, _), value in found.items() if kind == "all"] == [(1, 2, 0)]


# --- agreement with the chat's own notices -----------------------------------------------------------------


def noticed(site: Installation, at: int, answer: str) -> Run:
    """A turn that writes nothing and whose answer the chat stored with the nothingSaved notice."""
    chat = site.conversation(configuration="content-assistant", at=at)
    chat.user("Ändere den Teaser.", at=at)
    run = chat.run()
    run.llm("get_content")
    run.tool("get_content")
    run.answer(answer, notice="nothingSaved")
    run.finish()
    chat.close()
    return run


def test_notice_agreement_counts_the_answers_from_the_first_stored_notice_on(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt! Ich habe die Überschrift geändert.")  # before any notice: back-filled only
        first = noticed(site, OLD + 3600, "Erledigt.")  # the first stored notice; the recomputation agrees
        noticed(site, OLD + 7200, "Fertig, die Seite ist jetzt live.")  # flagged without a claim word
        talk(site, OLD + 9000, "Erledigt!")  # a claim the run never made, stored without the notice
        edit(site, OLD + 10_000)  # a claim the run made, no notice: agrees

    summary = measure(installation_engine, grains=(Grain.WEEK, Grain.DAY))
    days = rates(installation_engine, Grain.DAY)

    assert rate(installation_engine, Metric.NOTICE_AGREEMENT, OLD_WEEK) == (2, 4, 0)
    assert rate(installation_engine, Metric.CLAIMED_UNWRITTEN_RATE, OLD_WEEK) == (3, 5, 0)
    assert days[("notice_agreement", period_start(OLD, Grain.DAY), "all", "")] == (2, 4, 0)
    assert summary.first_notice == first.now  # the run's end, when its answer was stored
    assert summary.agreement == Count(2, 4, 0)


def test_notice_agreement_is_absent_while_no_answer_carries_a_stored_notice(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt!")

    summary = measure(installation_engine)

    assert "notice_agreement" not in {key[0] for key in rates(installation_engine)}
    assert summary.first_notice is None and summary.agreement == Count()


def test_a_claim_whose_events_cannot_be_read_is_excluded_from_notice_agreement_with_its_reason(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        noticed(site, OLD, "Erledigt.")
        page = site.page("Import", at=OLD - 30 * DAY)
        chat = site.conversation(configuration="content-assistant", page=page, at=OLD + 60)
        chat.user("Räume auf.", at=OLD + 60)
        run = chat.run()
        run.propose("update_record", page, fields=("title",))
        run.approve(at=OLD + 80, raw_target="{not json")
        run.answer("Gespeichert.")
        run.finish()
        chat.close()

    summary = measure(installation_engine)

    assert rate(installation_engine, Metric.NOTICE_AGREEMENT, OLD_WEEK) == (1, 1, 1)
    assert summary.exclusions[(Metric.NOTICE_AGREEMENT, _reason("events_unreadable"))] == 1


def test_rates_of_an_older_version_get_notice_agreement_in_their_closed_periods_too(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        noticed(site, OLD, "Erledigt.")
    measure(installation_engine)
    with installation_engine.begin() as connection:  # as a measure-rates from before the metric left it
        left_by_an_older_runrecord(connection, rates_version=2)
        connection.execute(schema.rate.delete().where(schema.rate.c.metric == "notice_agreement"))

    summary = measure(installation_engine)
    again = measure(installation_engine)

    assert summary.rates_rewritten and summary.periods[0].new_periods == 1
    assert rate(installation_engine, Metric.NOTICE_AGREEMENT, OLD_WEEK) == (1, 1, 0)
    assert not again.rates_rewritten and again.periods[0].kept_periods == 1


def test_a_measurement_of_days_alone_leaves_the_weeks_of_an_older_version_to_the_next_measurement_of_weeks(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        noticed(site, OLD, "Erledigt.")
    measure(installation_engine, grains=(Grain.WEEK, Grain.DAY))
    with installation_engine.begin() as connection:  # as a measure-rates from before the metric left it
        left_by_an_older_runrecord(connection, rates_version=2)
        connection.execute(schema.rate.delete().where(schema.rate.c.metric == "notice_agreement"))

    days = measure(installation_engine, grains=(Grain.DAY,))
    with installation_engine.connect() as connection:
        versions = [measure_marks.rates_version(connection, grain) for grain in (Grain.DAY, Grain.WEEK)]
    weeks = measure(installation_engine)
    again = measure(installation_engine)

    assert days.rates_rewritten and versions == [RATES_VERSION, 2]
    assert "  every period written afresh at day (" in "\n".join(summary_lines(days))
    assert weeks.rates_rewritten and rate(installation_engine, Metric.NOTICE_AGREEMENT, OLD_WEEK) == (1, 1, 0)
    assert not again.rates_rewritten


def test_measurements_of_weeks_alone_leave_the_marks_of_the_days_as_they_were(
    installation_engine: Engine,
) -> None:
    # The marks every measurement stores (the facts' rules, the newest outcome) are no marks of the days:
    # a measurement killed after its commit and run again stores the same rows as one that was not.
    with installation(installation_engine) as site:
        edit(site, OLD)
    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    def days_marks() -> dict[str, int]:
        with installation_engine.connect() as connection:
            stored = measure_marks.stored_marks(connection)
        return {name: value for name, value in stored.items() if name.endswith("_day")}

    measure(installation_engine)
    first = days_marks()
    measure(installation_engine)

    assert days_marks() == first == {"rates_version_day": 0}


def test_after_facts_counted_afresh_for_days_alone_the_next_measurement_of_weeks_writes_every_week_afresh(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        edit(site, OLD)
    measure(installation_engine, grains=(Grain.WEEK, Grain.DAY))
    facts_of_earlier_rules(installation_engine)

    days = measure(installation_engine, grains=(Grain.DAY,))
    weeks = measure(installation_engine)
    again = measure(installation_engine)

    assert days.rebuilt and (weeks.rebuilt, weeks.rates_rewritten) == (False, True)
    assert not again.rates_rewritten and again.periods[0].kept_periods >= 1


# At the demo's 100 conversations seed 1 plants no notice at all; at 200 it plants four disagreements.
AGREEMENT_DEMO = 200


def _planted_agreement(manifest: Path) -> tuple[int, int, str]:
    """From the generator's manifest: the completed answers from the first stored notice on, the planted
    disagreements among them, and the day of the first notice."""
    summary = json.loads(manifest.read_text(encoding="utf-8"))["summary"]
    first = int(summary["first_notice_at"])
    runs_file = manifest.with_name(manifest.name.removesuffix(".json") + ".runs.jsonl")
    runs = [json.loads(line) for line in runs_file.read_text(encoding="utf-8").splitlines()]
    answers = sum(1 for run in runs if run["answer"] is not None and run["answer"]["at"] >= first)
    disagreements = sum(1 for run in runs if run["notice_disagrees"])
    assert disagreements == summary["notice_disagreements"]
    return answers, disagreements, datetime.fromtimestamp(first, UTC).date().isoformat()


def _summed(found: dict[Key, tuple[int, int, int]], metric: str, kind: str) -> tuple[int, int, int]:
    rows = [value for key, value in found.items() if key[0] == metric and key[2] == kind]
    return sum(r[0] for r in rows), sum(r[1] for r in rows), sum(r[2] for r in rows)


def test_the_demos_planted_disagreements_are_all_that_notice_agreement_is_short_of(
    empty_db_url: str, tmp_path: Path
) -> None:
    _demo(empty_db_url, tmp_path, AGREEMENT_DEMO)
    answers, disagreements, _ = _planted_agreement(tmp_path / "demo.manifest.json")
    engine = make_engine(empty_db_url)
    try:
        summary = measure(engine, now=int(DEMO_NOW.timestamp()), grains=(Grain.WEEK, Grain.DAY))
        weeks, days = rates(engine), rates(engine, Grain.DAY)
    finally:
        engine.dispose()

    numerator, denominator, excluded = _summed(weeks, "notice_agreement", "all")
    assert disagreements > 0
    assert denominator + excluded == answers
    assert denominator - numerator == disagreements
    assert summary.agreement == Count(numerator, denominator, excluded)
    assert _summed(days, "notice_agreement", "all") == (numerator, denominator, excluded)
    assert _summed(weeks, "notice_agreement", "configuration")[1] == denominator  # every answer has its run
    assert {key[2] for key in weeks if key[0] == "notice_agreement"} == {"all", "configuration", "skill"}


@on_sqlite_alone
def test_the_command_prints_notice_agreement_with_its_numerator_and_denominator(
    empty_db_url: str, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    _demo(empty_db_url, tmp_path, AGREEMENT_DEMO)
    answers, disagreements, first_day = _planted_agreement(tmp_path / "demo.manifest.json")

    result = run_cli("measure-rates", "--db", empty_db_url, "--now", DEMO_NOW.isoformat())

    assert result.exit_code == 0, result.output
    line = next(line.strip() for line in result.output.splitlines() if "notice_agreement:" in line)
    engine = make_engine(empty_db_url)
    numerator, denominator, excluded = _summed(rates(engine), "notice_agreement", "all")
    engine.dispose()
    assert (denominator - numerator, denominator + excluded) == (disagreements, answers)
    assert line == (
        f"notice_agreement: {numerator:,} / {denominator:,} = {numerator / denominator:.1%} "
        f"(answers after the first stored notice, {first_day})"
        + (f"; excluded {excluded:,} (cannot tell)" if excluded else "")
    )


# --- runs inside their window: a stored count -----------------------------------------------------------


def test_the_runs_inside_their_window_are_stored_per_period_and_group_as_a_count(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        edit(site, OLD)  # its window closed long ago: derived
        edit(site, NOW - 2 * DAY)  # wrote two days ago: inside its window
        edit(site, NOW - DAY)
        talk(site, NOW - DAY, "Erledigt.")  # no write: never inside a window
    derived = derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    summary = measure(installation_engine, grains=(Grain.WEEK, Grain.DAY))
    found = rates(installation_engine)
    days = rates(installation_engine, Grain.DAY)

    assert derived.runs_inside_window == 2 and summary.periods[0].inside_window == 2
    assert found[("window_open", OPEN_WEEK, "all", "")] == (2, 2, 0)
    assert found[("window_open", OPEN_WEEK, "configuration", "seo-assistant")] == (2, 2, 0)
    assert found[("window_open", OPEN_WEEK, "skill", "seo-check")] == (2, 2, 0)
    assert {key for key in found if key[0] == "window_open"} == {
        ("window_open", OPEN_WEEK, "all", ""),
        ("window_open", OPEN_WEEK, "configuration", "seo-assistant"),
        ("window_open", OPEN_WEEK, "skill", "seo-check"),
    }  # never a row of zero: not for the closed week, not for the configuration that did not write
    for day in (NOW - 2 * DAY, NOW - DAY):
        assert days[("window_open", period_start(day, Grain.DAY), "all", "")] == (1, 1, 0)


def test_a_period_closed_since_the_last_run_is_written_once_more_without_runs_inside_their_window(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        edit(site, NOW - 2 * DAY)
    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)
    measure(installation_engine)
    assert rate(installation_engine, Metric.WINDOW_OPEN, OPEN_WEEK) == (1, 1, 0)
    assert ("unknown_share", OPEN_WEEK, "all", "") not in rates(installation_engine)  # not derived yet
    later = NOW + 14 * DAY  # the week has closed; derive-outcomes runs first, as the scheduler runs it
    derive_outcomes(installation_engine, now=later, window_s=WINDOW)

    summary = measure(installation_engine, now=later)
    again = measure(installation_engine, now=later + DAY)

    found = rates(installation_engine)
    assert ("window_open", OPEN_WEEK, "all", "") not in found
    assert found[("unknown_share", OPEN_WEEK, "all", "")][1] == 1  # its outcome is counted now
    assert summary.periods[0].closing_periods == 1 and summary.periods[0].inside_window == 0
    assert again.periods[0].closing_periods == 0 and again.periods[0].kept_periods == 1


def _inside_their_window(engine: Engine, now: int) -> dict[date, int]:
    """Runs with a tool_write whose last write's window has not closed at `now` and without an outcome, per
    week of the run's end: counted here from the events, in Python."""
    e, r, o = schema.agentrun_event.c, schema.agentrun.c, schema.run_outcome.c
    with engine.connect() as connection:
        last_write: dict[int, int] = {}
        for run, crdate in connection.execute(select(e.run, e.crdate).where(e.kind == "tool_write")):
            last_write[int(run)] = max(last_write.get(int(run), 0), int(crdate))
        answered = {int(uid) for uid in connection.execute(select(o.run_uid)).scalars()}
        ends = {
            int(row.uid): run_end(int(row.finished_at), int(row.tstamp), int(row.started_at), int(row.crdate))
            for row in connection.execute(select(r.uid, r.finished_at, r.tstamp, r.started_at, r.crdate))
        }
    weeks: dict[date, int] = {}
    for run, written in last_write.items():
        if now > written + WINDOW or run in answered:  # core.outcomes.is_due, or derived
            continue
        week = period_start(ends[run], Grain.WEEK)
        weeks[week] = weeks.get(week, 0) + 1
    return weeks


def test_the_stored_count_is_every_run_derive_outcomes_left_inside_its_window(
    empty_db_url: str, tmp_path: Path
) -> None:
    _demo(empty_db_url, tmp_path, 100)
    engine = make_engine(empty_db_url)
    now = int(DEMO_NOW.timestamp())
    try:
        derived = derive_outcomes(engine, now=now, window_s=WINDOW)
        summary = measure(engine, now=now, grains=(Grain.WEEK, Grain.DAY))
        expected = _inside_their_window(engine, now)
        weeks, days = rates(engine), rates(engine, Grain.DAY)
    finally:
        engine.dispose()

    stored = {key[1]: value for key, value in weeks.items() if key[0] == "window_open" and key[2] == "all"}
    assert derived.runs_inside_window > 0
    assert stored == {week: (runs, runs, 0) for week, runs in expected.items()}
    assert sum(runs for runs, _, _ in stored.values()) == derived.runs_inside_window
    assert summary.periods[0].inside_window == summary.periods[1].inside_window == derived.runs_inside_window
    by_day = [value[0] for key, value in days.items() if key[0] == "window_open" and key[2] == "all"]
    assert sum(by_day) == derived.runs_inside_window
    by_configuration = [
        value[0] for key, value in weeks.items() if key[0] == "window_open" and key[2] == "configuration"
    ]
    assert sum(by_configuration) == derived.runs_inside_window  # every run has its configuration
    first_open = min(report.first_open for report in summary.periods if report.grain is Grain.WEEK)
    assert all(week >= first_open for week in stored)  # only open periods hold runs inside their window


# --- malformed rows: excluded with a reason, never a zero ---------------------------------------------------


def test_a_claim_whose_events_cannot_be_read_is_excluded_not_counted(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = site.page("Import", at=OLD - 30 * DAY)
        chat = site.conversation(configuration="content-assistant", page=page, at=OLD)
        chat.user("Räume auf.", at=OLD)
        run = chat.run()
        run.propose("update_record", page, fields=("title",))
        run.approve(at=OLD + 20, raw_target="{not json")
        run.answer("Gespeichert.")
        run.finish()
        chat.close()
        talk(site, OLD + 60, "Erledigt.")

    summary = measure(installation_engine)

    assert rate(installation_engine, Metric.CLAIMED_UNWRITTEN_RATE, OLD_WEEK) == (1, 1, 1)
    assert rate(installation_engine, Metric.NOTHING_SAVED_RATE, OLD_WEEK) == (0, 2, 0)
    assert summary.exclusions[(Metric.CLAIMED_UNWRITTEN_RATE, _reason("events_unreadable"))] == 1


def test_an_assistant_message_that_is_not_json_is_excluded_from_every_answer_rate(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        run = talk(site, OLD, "Erledigt.")
        run.chat.messages[-1]["payload"] = "{broken"  # stored so by an old version: the builder writes it
        talk(site, OLD + 60, "Hier ist ein Vorschlag.")

    measure(installation_engine)

    for metric in (Metric.NOTHING_SAVED_RATE, Metric.CLAIMED_UNWRITTEN_RATE):
        assert rate(installation_engine, metric, OLD_WEEK) == (0, 1, 1)


def _reason(value: str) -> Any:
    from core.facts import Exclusion

    return Exclusion(value)


# --- reruns -------------------------------------------------------------------------------------------------


def _without_time(engine: Engine) -> list[tuple[Any, ...]]:
    r = schema.rate.c
    query = select(
        r.metric, r.grain, r.period_start, r.group_kind, r.group_value, r.numerator, r.denominator, r.excluded
    ).order_by(r.metric, r.grain, r.period_start, r.group_kind, r.group_value)
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(query)]


def test_measuring_twice_replaces_every_row_with_the_same_row(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")
        edit(site, NOW - DAY)

    measure(installation_engine, grains=(Grain.WEEK, Grain.DAY))
    first = _without_time(installation_engine)
    measure(installation_engine, grains=(Grain.WEEK, Grain.DAY))
    second = _without_time(installation_engine)

    assert second == first
    assert len({row[:5] for row in second}) == len(second)


def test_a_rerun_rewrites_the_open_periods_and_leaves_closed_ones_as_stored(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")
        talk(site, NOW - DAY, "Erledigt.")
    measure(installation_engine)
    r = schema.rate.c
    with installation_engine.begin() as connection:
        connection.execute(
            update(schema.rate).where(r.metric == "claimed_unwritten_rate").values(excluded=99)
        )

    summary = measure(installation_engine)

    assert rate(installation_engine, Metric.CLAIMED_UNWRITTEN_RATE, OLD_WEEK) == (
        1,
        1,
        99,
    )  # closed: untouched
    assert rate(installation_engine, Metric.CLAIMED_UNWRITTEN_RATE, OPEN_WEEK) == (
        1,
        1,
        0,
    )  # open: recomputed
    assert summary.periods[0].kept_periods == 1 and summary.periods[0].new_periods == 0


def _measured_days(engine: Engine) -> Run:
    """Five conversations a day apart from OLD on, each a run that answers "Erledigt.", measured; the oldest
    one's run."""
    with installation(engine) as site:
        runs = [talk(site, OLD + n * DAY, "Erledigt.") for n in range(5)]
    measure(engine)
    return runs[0]


def test_a_rerun_reads_only_what_changed_and_counts_it_in_its_open_period(
    installation_engine: Engine,
) -> None:
    _measured_days(installation_engine)
    with installation(installation_engine, seed=2) as site:
        talk(site, NOW - 3600, "Erledigt.")

    summary = measure(installation_engine, now=NOW + 3600)

    # The new conversation alone: the others were stamped days before the last measurement read them.
    assert summary.conversations == 1 and not summary.all_conversations
    assert summary.periods[0].kept_changed == 0
    assert rate(installation_engine, Metric.CLAIMED_UNWRITTEN_RATE, OPEN_WEEK) == (1, 1, 0)


def test_a_run_whose_row_changed_since_the_last_run_has_its_conversation_counted_again(
    installation_engine: Engine,
) -> None:
    oldest = _measured_days(installation_engine)
    # The run's row changes (its configuration, here), and nothing else of its conversation.
    _reconfigured(installation_engine, oldest.uid, at=NOW - 600)

    summary = measure(installation_engine, now=NOW + 3600)

    assert summary.conversations == 1 and not summary.all_conversations
    assert _stored_configuration(installation_engine, oldest.uid) == "seo-assistant"


def _reconfigured(engine: Engine, run_uid: int, *, at: int) -> None:
    """The run's configuration changed, its row stamped `at`."""
    with engine.begin() as connection:
        connection.execute(
            update(schema.agentrun)
            .where(schema.agentrun.c.uid == run_uid)
            .values(configuration_identifier="seo-assistant", tstamp=at)
        )


def _stored_configuration(engine: Engine, run_uid: int) -> str:
    """The configuration the run's fact holds."""
    return _stored_fact(engine, run_uid, "configuration_identifier")


def _stored_fact(engine: Engine, run_uid: int, column: str) -> str:
    """A column of the run's fact, as stored."""
    f = schema.measure_fact.c
    with engine.connect() as connection:
        query = select(f[column]).where(f.run_uid == run_uid, f.message_uid == 0)
        return str(connection.execute(query).scalar_one())


def _stamped(engine: Engine, run: Run, *, at: int) -> None:
    """The run's conversation row saved again, stamped `at`, its skill changed: what a rerun reads again."""
    c = schema.conversation.c
    with engine.begin() as connection:
        saved = update(schema.conversation).where(c.uid == run.chat.uid)
        connection.execute(saved.values(skill_identifier="seo-check", tstamp=at))


def test_a_rerun_after_an_idle_hour_before_the_last_measurement_reads_no_conversation_again(
    installation_engine: Engine,
) -> None:
    _measured_days(installation_engine)

    summary = measure(installation_engine, now=NOW + DAY)

    assert (summary.conversations, summary.unnamed_runs, summary.all_conversations) == (0, 0, False)


def test_a_conversation_saved_after_the_last_measurement_read_but_stamped_before_its_mark_is_counted_again(
    installation_engine: Engine,
) -> None:
    # The chat stamps a conversation with the time of the write; saved in a transaction that committed after
    # the last measurement read the table, it carries a stamp older than the newest that measurement saw.
    with installation(installation_engine) as site:
        late = talk(site, NOW - 200, "Erledigt.")
        talk(site, NOW - 60, "Erledigt.")
    measure(installation_engine)
    _stamped(installation_engine, late, at=NOW - 100)

    summary = measure(installation_engine, now=NOW + DAY)

    assert not summary.all_conversations and summary.conversations >= 1
    assert _stored_fact(installation_engine, late.uid, "skill_identifier") == "seo-check"


def test_after_a_measurement_whose_now_was_ahead_of_this_one_rows_are_read_from_the_margin_before_the_marks(
    installation_engine: Engine,
) -> None:
    # A `--now` ahead of the clock says nothing of when that measurement read the tables.
    with installation(installation_engine) as site:
        late = talk(site, NOW - 3 * DAY, "Erledigt.")
        talk(site, NOW - 3 * DAY + 200, "Erledigt.")
    measure(installation_engine, now=NOW + DAY)
    _stamped(installation_engine, late, at=NOW - 3 * DAY + 100)

    summary = measure(installation_engine)

    assert summary.conversations == 2 and not summary.all_conversations
    assert _stored_fact(installation_engine, late.uid, "skill_identifier") == "seo-check"


def test_after_a_measurement_whose_now_was_ahead_of_the_clock_a_row_it_could_not_see_is_counted_again(
    installation_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given `--now` ahead of the system clock, a measurement read the tables at the clock's time: a row
    # committed after that, stamped before its mark, is read again by the next measurement on the clock.
    with installation(installation_engine) as site:
        late = talk(site, NOW - 200, "Erledigt.")
        talk(site, NOW - 60, "Erledigt.")
    monkeypatch.setattr(clock, "system", lambda: NOW)
    measure(installation_engine, now=NOW + 600)
    _stamped(installation_engine, late, at=NOW - 100)
    monkeypatch.setattr(clock, "system", lambda: NOW + DAY)

    summary = measure(installation_engine, now=NOW + DAY)

    # Both conversations: stamped within five minutes before the clock's time of that read.
    assert not summary.all_conversations and summary.conversations == 2
    assert _stored_fact(installation_engine, late.uid, "skill_identifier") == "seo-check"


def test_after_a_measurement_at_the_same_now_rows_are_read_again_from_the_margin_before_the_marks(
    installation_engine: Engine,
) -> None:
    # A fixed clock (RUNRECORD_NOW, or `--now` given again) says nothing of when the last one read.
    _measured_days(installation_engine)

    summary = measure(installation_engine)

    # The newest conversation again: it is within the margin before the mark.
    assert summary.conversations == 1 and not summary.all_conversations


def test_a_run_saved_after_the_last_measurement_read_but_stamped_before_its_mark_is_counted_again(
    installation_engine: Engine,
) -> None:
    # Its conversation is stamped days before: only the run's row says it changed.
    with installation(installation_engine) as site:
        late = talk(site, NOW - 2 * DAY, "Erledigt.")
        other = talk(site, NOW - 2 * DAY, "Erledigt.")
    with installation_engine.begin() as connection:
        r = schema.agentrun.c
        connection.execute(update(schema.agentrun).where(r.uid == other.uid).values(tstamp=NOW - 60))
    measure(installation_engine)
    _reconfigured(installation_engine, late.uid, at=NOW - 150)

    summary = measure(installation_engine, now=NOW + DAY)

    assert not summary.all_conversations and summary.conversations >= 1
    assert _stored_configuration(installation_engine, late.uid) == "seo-assistant"


def test_a_row_stamped_in_the_future_hides_no_later_change_from_the_next_run(
    installation_engine: Engine,
) -> None:
    oldest = _measured_days(installation_engine)
    r = schema.agentrun.c
    with installation_engine.begin() as connection:
        newest = connection.execute(select(func.max(r.uid))).scalar_one()
        connection.execute(update(schema.agentrun).where(r.uid == newest).values(tstamp=2_147_483_647))
    measure(installation_engine)
    _reconfigured(installation_engine, oldest.uid, at=NOW + 3600)  # an hour after that measurement

    summary = measure(installation_engine, now=NOW + 7200)

    assert not summary.all_conversations
    assert _stored_configuration(installation_engine, oldest.uid) == "seo-assistant"


def test_after_the_stamps_went_back_the_marks_follow_the_tables_and_a_later_change_is_counted(
    installation_engine: Engine,
) -> None:
    # An installation restored from a backup: no row is stamped since the marks any more. The new marks are
    # the tables' newest stamps, not the old marks, which would hide every change stamped before them.
    oldest = _measured_days(installation_engine)
    with installation_engine.begin() as connection:
        connection.execute(update(schema.conversation).values(tstamp=OLD - DAY))
        connection.execute(update(schema.agentrun).values(tstamp=OLD - DAY))
    measure(installation_engine)
    with installation_engine.connect() as connection:
        stored = measure_marks.stored_marks(connection)
        now = measure_marks.source_marks(connection)
    _reconfigured(installation_engine, oldest.uid, at=OLD)

    summary = measure(installation_engine)

    assert (stored["conversation_tstamp"], stored["run_tstamp"]) == (OLD - DAY, OLD - DAY)
    assert {name: stored[name] for name in now.as_rows()} == now.as_rows()
    assert not summary.all_conversations
    assert _stored_configuration(installation_engine, oldest.uid) == "seo-assistant"


def test_a_new_event_of_a_run_whose_row_did_not_change_has_its_conversation_counted_again(
    installation_engine: Engine,
) -> None:
    oldest = _measured_days(installation_engine)
    e = schema.agentrun_event.c
    with installation_engine.begin() as connection:
        last = connection.execute(
            select(e.sequence).where(e.run == oldest.uid).order_by(e.sequence.desc())
        ).first()
        connection.execute(
            insert(schema.agentrun_event).values(
                run=oldest.uid,
                sequence=(0 if last is None else int(last[0])) + 1,
                kind="tool_result",
                round=1,
                duration_ms=0,
                payload='{"toolName": "get_page", "toolIsError": false}',
                crdate=OLD + 600,
            )
        )

    summary = measure(installation_engine, now=NOW + 3600)

    # The run's conversation, found by its new event.
    assert summary.conversations == 1 and not summary.all_conversations


def test_a_late_run_in_a_closed_period_is_reported_and_the_stored_period_is_not_rewritten(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")
    measure(installation_engine)
    with installation(installation_engine, seed=2) as site:
        talk(site, OLD + 3600, "Hier ist ein Vorschlag.")  # arrives after its period closed

    summary = measure(installation_engine)

    assert rate(installation_engine, Metric.CLAIMED_UNWRITTEN_RATE, OLD_WEEK) == (1, 1, 0)
    assert summary.periods[0].kept_changed == 1


def test_a_period_that_lost_its_data_loses_its_rows(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        run = talk(site, NOW - DAY, "Erledigt.")
    measure(installation_engine)
    with installation_engine.begin() as connection:
        connection.execute(schema.message.delete().where(schema.message.c.conversation == run.chat.uid))
        connection.execute(
            update(schema.conversation).where(schema.conversation.c.uid == run.chat.uid).values(tstamp=NOW)
        )

    measure(installation_engine)

    assert ("claimed_unwritten_rate", OPEN_WEEK, "all", "") not in rates(installation_engine)
    assert rate(installation_engine, Metric.RUNS, OPEN_WEEK) == (1, 1, 0)  # the run is still there


# --- privacy ------------------------------------------------------------------------------------------------


@contextmanager
def statements() -> Iterator[list[str]]:
    """Every SQL statement any engine sends while the block runs."""
    seen: list[str] = []

    def capture(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    event.listen(Engine, "before_cursor_execute", capture)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", capture)


def test_no_statement_names_an_editor_and_no_group_is_an_editor(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")
        edit(site, OLD + 600)
        talk(site, NOW - DAY, "Erledigt.")
    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    with statements() as seen:
        measure(installation_engine, grains=(Grain.WEEK, Grain.DAY))
        measure(installation_engine)
        run_cli("release", "add", "2026-11-02", "Prompt rule", "--db", installation_url)
        run_cli("release", "list", "--db", installation_url)
        result = run_cli("compare", "claimed_unwritten_rate", "--at", "2026-11-02", "--db", installation_url)

    assert result.exit_code == 0, result.output
    assert seen
    assert [s for s in seen if any(name in s.lower() for name in EDITOR_COLUMNS)] == []
    groups = {(kind, value) for _, _, kind, value in rates(installation_engine)}
    assert {kind for kind, _ in groups} <= {"all", "configuration", "skill"}
    assert not any(str(editor) in value for _, value in groups for editor in EDITORS + (1,))


# --- the command --------------------------------------------------------------------------------------------


@on_sqlite_alone
def test_the_command_prints_what_it_read_and_wrote(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")

    result = run_cli("measure-rates", "--db", installation_url, "--now", "2026-12-02T12:00:00")
    again = run_cli("measure-rates", "--db", installation_url, "--now", "2026-12-02T12:00:00", "--json")

    assert result.exit_code == 0, result.output
    assert "runs 1 " in result.output and "week: open from 2026-11-30" in result.output
    document = json.loads(again.output)
    assert document["periods"][0]["closed_kept"] == 1 and document["rebuilt"] is False


@on_sqlite_alone  # MariaDB and PostgreSQL keep no such value in a DATE column
def test_a_rate_whose_period_is_no_date_fails_the_command_in_one_line_naming_its_row_and_writes_nothing(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")
    measure(installation_engine)
    r = schema.rate.c
    with installation_engine.begin() as connection:
        spoilt = connection.execute(select(func.min(r.uid))).scalar_one()
        connection.exec_driver_sql(
            f"UPDATE {schema.rate.name} SET period_start = '2026-99-99' WHERE uid = {int(spoilt)}"
        )
        before = connection.execute(select(schema.rate.c.uid, schema.rate.c.computed_at)).all()
    with installation(installation_engine) as site:
        talk(site, NOW - DAY, "Erledigt.")

    result = run_cli("measure-rates", "--db", installation_url, "--now", "2026-12-02T12:00:00")

    assert result.exit_code == 1 and "Traceback" not in result.output + result.stderr
    assert result.stderr.splitlines() == [
        f"runrecord: error: measure-rates on {installation_url} failed: tx_runrecord_rate row #{spoilt} "
        "holds no date (YYYY-MM-DD) in period_start: '2026-99-99': mend or delete it"
    ]
    with installation_engine.connect() as connection:
        assert connection.execute(select(schema.rate.c.uid, schema.rate.c.computed_at)).all() == before


def test_a_database_without_our_newest_tables_is_one_error_line(
    empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    engine = make_engine(empty_db_url)
    from jobs.schema_setup import init_db

    init_db(engine, with_upstream=True)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE tx_runrecord_alembic_version SET version_num = '0003'")
    engine.dispose()

    result = run_cli("measure-rates", "--db", empty_db_url)

    assert result.exit_code == 1
    assert result.stderr.startswith("runrecord: error:") and len(result.stderr.splitlines()) == 1
    assert "init-db" in result.stderr


# --- done when: the demo's release is a significant drop ----------------------------------------------------

DEMO_NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _demo(url: str, tmp_path: Path, conversations: int) -> str:
    manifest = tmp_path / "demo.manifest.json"
    generate(
        url,
        create_tables=init_installation,
        conversations=conversations,
        seed=1,
        now=DEMO_NOW,
        manifest=manifest,
    )
    return str(json.loads(manifest.read_text(encoding="utf-8"))["release"]["date"])


# The demo's default of 100 conversations is too few: each 4-week side holds about 24 completed answers.
# With seed 1 the drop is significant from about 1,050 conversations (each side about 250 answers).
SIGNIFICANT_DEMO = 1_200


# Whether the demo's drop is significant is a matter of its 1,200 conversations and the statistics, not of the
# database: tests/db/test_measure_differential.py holds every dialect to the same facts and rates.
@on_sqlite_alone
def test_the_release_the_demo_planted_is_a_significant_drop_of_claimed_unwritten_answers(
    empty_db_url: str, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    released = _demo(empty_db_url, tmp_path, SIGNIFICANT_DEMO)
    now = DEMO_NOW.isoformat()
    derived = run_cli("derive-outcomes", "--db", empty_db_url, "--now", now)
    run_cli(
        "release", "add", released, "Prompt rule: claim a change only on a write result", "--db", empty_db_url
    )

    measured = run_cli("measure-rates", "--db", empty_db_url, "--now", now)
    compared = run_cli(
        "compare", "claimed_unwritten_rate", "--at", released, "--db", empty_db_url, "--now", now
    )

    assert derived.exit_code == 0, derived.output
    assert measured.exit_code == 0, measured.output
    line = next(line for line in measured.output.splitlines() if "claimed_unwritten_rate" in line)
    assert line.endswith("fell significantly: better"), measured.output
    assert compared.exit_code == 0, compared.output
    assert "→ fell significantly: better" in compared.output
    assert "before" in compared.output and "after" in compared.output and "Newcombe" in compared.output


@on_sqlite_alone
def test_at_the_demos_100_conversations_the_drop_is_too_few_to_tell(
    empty_db_url: str, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    released = _demo(empty_db_url, tmp_path, 100)
    now = DEMO_NOW.isoformat()
    run_cli("measure-rates", "--db", empty_db_url, "--now", now)

    compared = run_cli(
        "compare", "claimed_unwritten_rate", "--at", released, "--db", empty_db_url, "--now", now, "--json"
    )

    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.output)["verdict"] == "too few to tell"


@on_sqlite_alone
def test_the_scheduled_job_measures_both_grains_and_says_what_it_did(
    installation_engine: Engine, installation_url: str
) -> None:
    from jobs.measure import run_job

    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")

    result = run_job(installation_url, now=datetime.fromtimestamp(NOW, UTC))

    assert result.processed == 1 and result.failed == 0
    assert "week: periods written" in result.message and "day: periods written" in result.message
    assert rates(installation_engine, Grain.DAY) and rates(installation_engine, Grain.WEEK)


def test_batches_of_any_size_give_the_same_rates(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        for n in range(5):
            talk(site, OLD + n * 3600, "Erledigt." if n % 2 else "Ein Vorschlag.")
        edit(site, NOW - DAY)
    measure(installation_engine)
    whole = _without_time(installation_engine)
    with installation_engine.begin() as connection:
        for table in (schema.rate, schema.measure_fact, schema.measure_mark):
            connection.execute(table.delete())

    summary = measure_rates(installation_engine, now=NOW, window_s=WINDOW, batch_size=2)

    assert summary.batches == 3
    assert _without_time(installation_engine) == whole


def test_a_quiet_week_holding_now_minus_the_window_is_closed_for_measure_rates_compare_and_the_page_alike(
    installation_engine: Engine,
) -> None:
    now = unix_of(date(2026, 11, 4)) + 12 * 3600  # a Wednesday: now − 7 days falls in the week of 10-26
    with installation(installation_engine) as site:
        talk(site, unix_of(date(2026, 10, 20)), "Erledigt.")  # ended long before the cutoff
        talk(site, unix_of(date(2026, 11, 3)), "Erledigt.")  # the first run that may still change

    summary = measure_rates(installation_engine, now=now, window_s=7 * DAY_S, grains=(Grain.WEEK, Grain.DAY))
    with installation_engine.connect() as connection:
        stored = {grain: measure_marks.first_open(connection, grain, now=now) for grain in Grain}

    measured = {report.grain: report.first_open for report in summary.periods}
    assert measured == stored
    assert stored[Grain.WEEK] == date(2026, 11, 2)  # the quiet week of 10-26 is closed
    assert not is_open(date(2026, 10, 26), stored[Grain.WEEK])


# Only SQLite stores such a stamp in nr-llm's int(11) columns.
@on_sqlite_alone
def test_a_run_stamped_finished_from_the_year_9000_on_ends_at_its_last_update_and_the_rest_is_measured(
    installation_engine: Engine,
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=NOW - 30 * DAY)
        runs = []
        for index in range(2):
            chat = site.conversation(configuration="seo-assistant", at=NOW - 20 * DAY + index, page=page)
            chat.user("Setze den Titel.", at=NOW - 20 * DAY + index)
            run = chat.run()
            run.propose("update_page_seo", page, fields=("seo_title",))
            run.approve()
            run.answer("Gespeichert.")
            run.finish()
            chat.close()
            runs.append(run)
        site.finish()
        r = schema.agentrun.c
        corrupt = connection.execute(select(r.uid, r.tstamp).where(r.uuid == runs[0].uuid)).one()
        year_10000 = 253_402_300_800
        connection.execute(update(schema.agentrun).where(r.uid == corrupt.uid).values(finished_at=year_10000))

    summary = measure_rates(installation_engine, now=NOW, window_s=WINDOW)

    f = schema.measure_fact.c
    with installation_engine.connect() as connection:
        ends = dict(connection.execute(select(f.run_uid, f.ended_at).where(f.message_uid == 0)).all())
    assert summary.runs == 2
    assert ends[corrupt.uid] == corrupt.tstamp


# --- runs nr-llm purged -------------------------------------------------------------------------------------


def _purge(engine: Engine, run: Run) -> None:
    """nr-llm's retention purge (DOMAIN.md, "Retention"): the run and its events are gone; the chat's
    conversation stays and is touched by a later message."""
    with engine.begin() as connection:
        connection.execute(delete(schema.agentrun_event).where(schema.agentrun_event.c.run == run.uid))
        connection.execute(delete(schema.agentrun).where(schema.agentrun.c.uid == run.uid))
        connection.execute(update(schema.conversation).values(tstamp=NOW + DAY))


RUN_METRICS = (Metric.RUNS, Metric.ACCEPTED_UNCHANGED_RATE, Metric.EDITED_RATE, Metric.UNKNOWN_SHARE)
ANSWER_METRICS = (Metric.NOTHING_SAVED_RATE,)


def _old_week(engine: Engine, metrics: tuple[Metric, ...]) -> dict[str, tuple[int, ...]]:
    found = rates(engine)
    return {
        metric.value: found[(metric.value, OLD_WEEK, "all", "")]
        for metric in metrics
        if (metric.value, OLD_WEEK, "all", "") in found
    }


def _two_edits_measured(engine: Engine) -> Run:
    """Two approved writes in the old week, derived and measured; the first one's run."""
    with installation(engine) as site:
        purged = edit(site, OLD)
        edit(site, OLD + 3600)
    derive_outcomes(engine, now=NOW, window_s=WINDOW)
    measure(engine)
    return purged


def test_a_run_nr_llm_purged_keeps_counting_in_its_week_and_its_answer_is_counted_once(
    installation_engine: Engine,
) -> None:
    purged = _two_edits_measured(installation_engine)
    before = _old_week(installation_engine, RUN_METRICS + ANSWER_METRICS)

    _purge(installation_engine, purged)
    touched = measure(installation_engine, now=NOW + 2 * DAY)
    m = schema.measure_mark.c
    with installation_engine.begin() as connection:  # rates of an earlier version: every week written afresh
        connection.execute(
            update(schema.measure_mark).where(m.name == "rates_version_week").values(value=RATES_VERSION - 1)
        )
    rewritten = measure(installation_engine, now=NOW + 2 * DAY)

    assert not touched.rebuilt and (rewritten.rebuilt, rewritten.rates_rewritten) == (False, True)
    assert _old_week(installation_engine, RUN_METRICS) == {
        name: value for name, value in before.items() if name != Metric.NOTHING_SAVED_RATE.value
    }
    assert _old_week(installation_engine, ANSWER_METRICS)[Metric.NOTHING_SAVED_RATE.value][1] == 2
    assert before[Metric.RUNS.value] == (2, 2, 0)


def test_facts_counted_afresh_under_new_rules_keep_the_runs_nr_llm_purged(
    installation_engine: Engine,
) -> None:
    purged = _two_edits_measured(installation_engine)
    before = _old_week(installation_engine, RUN_METRICS)
    _purge(installation_engine, purged)
    facts_of_earlier_rules(installation_engine)

    afresh = measure(installation_engine, now=NOW + 2 * DAY)

    assert afresh.rebuilt and afresh.rates_rewritten
    assert _old_week(installation_engine, RUN_METRICS) == before
    assert _old_week(installation_engine, ANSWER_METRICS)[Metric.NOTHING_SAVED_RATE.value][1] == 2


def test_a_purged_runs_fact_kept_through_a_recount_says_nothing_its_earlier_rules_read_of_its_answer(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        purged = edit(site, OLD)
    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)
    measure(installation_engine)
    _purge(installation_engine, purged)
    with installation_engine.begin() as connection:  # the chat deleted the conversation too
        connection.execute(delete(schema.message))
        connection.execute(delete(schema.conversation))
    facts_of_earlier_rules(installation_engine)

    measure(installation_engine, now=NOW + 2 * DAY)

    f = schema.measure_fact.c
    with installation_engine.connect() as connection:
        kept = connection.execute(select(f.runs, f.answer, f.claim).where(f.run_uid == purged.uid)).one()
    assert tuple(kept) == (1, "", "")
    assert _old_week(installation_engine, (Metric.RUNS,)) == {Metric.RUNS.value: (1, 1, 0)}
