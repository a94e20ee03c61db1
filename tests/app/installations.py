"""The databases the dashboard tests read: the demo measured by the jobs, and one with bad rows.

Every row is written by the installation builder or by the jobs themselves (derive-outcomes, measure-rates,
watch-conversations, release add), never by hand.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from adapters.database import make_engine, parse_url, sqlite_path
from core.time import DAY_S
from data.builder import Installation
from data.generate import default_manifest, generate
from data.story import EDITORS
from jobs import measure, releases, watch
from jobs.derive import derive_outcomes
from jobs.job_log import JobResult, execute
from jobs.schema_setup import init_db, init_installation

WINDOW_S = 7 * DAY_S
DAY = DAY_S
RELEASE_LABEL = "Prompt rule: claim a change only on a write result"


SMALL_DEMO = 120  # the conversations the small demo asks for (its SEO campaign's tours come on top)


def small_demo(url: str, now: datetime) -> None:
    """The small demo installation (seed 1) written to url around `now`; no job has run on it."""
    generate(
        url,
        create_tables=init_installation,
        conversations=SMALL_DEMO,
        seed=1,
        now=now,
        manifest=default_manifest(parse_url(url)),
    )


def planted_runs(demo_url: str) -> list[dict[str, Any]]:
    """Every run the demo generator planted, as its manifest lists them (data/generate.py): the conversation,
    whether its answer claims a change it never made, the notice stored with it, whether that notice
    disagrees with core's claim rule."""
    manifest = default_manifest(parse_url(demo_url))
    assert manifest is not None
    runs_file = manifest.with_name(json.loads(manifest.read_text(encoding="utf-8"))["runs_file"])
    return [json.loads(line) for line in runs_file.read_text(encoding="utf-8").splitlines() if line]


def run_the_jobs(url: str, now: datetime) -> None:
    """derive-outcomes, measure-rates (week and day) and watch-conversations once, each a recorded job run."""
    engine = make_engine(url)
    try:
        at = int(now.timestamp())

        def derive() -> JobResult:
            summary = derive_outcomes(engine, now=at, window_s=WINDOW_S)
            return JobResult(summary.runs_derived, 0, f"derived {summary.runs_derived} runs")

        execute(engine, "derive-outcomes", derive)
        execute(engine, "measure-rates", lambda: measure.run_job(url, now=now))
        execute(engine, "watch-conversations", lambda: watch.run_job(url, now=now))
    finally:
        engine.dispose()


def released(
    url: str, now: datetime, released_on: date, label: str, *, notice_after: bool, per_week: int
) -> None:
    """Four weeks of `per_week` one-run conversations a week before a release and four after it, each answer
    carrying the nothingSaved notice on one side of the release only (after it when `notice_after`); the
    release recorded and the jobs run."""
    engine = make_engine(url)
    init_db(engine, with_upstream=True)
    with engine.begin() as connection:
        site = Installation(connection)
        for week in range(-4, 4):
            monday = released_on + timedelta(weeks=week)
            for n in range(per_week):
                at = int(datetime(monday.year, monday.month, monday.day, tzinfo=UTC).timestamp()) + n * 3600
                chat = site.conversation(configuration="content-assistant", at=at)
                chat.user("Schlag mir eine Überschrift vor.", at=at)
                run = chat.run()
                run.llm("get_page")
                run.tool("get_page")
                noticed = (week >= 0) is notice_after
                run.answer("Ein Vorschlag: Sommerangebote.", notice="nothingSaved" if noticed else None)
                run.finish()
                chat.close()
        site.finish()
    releases.add_release(engine, released_on, label, now=int(now.timestamp()))
    engine.dispose()
    run_the_jobs(url, now)


def measured_copy(demo_url: str, target: Path, now: datetime) -> tuple[str, date]:
    """A copy of the demo database with its planted release recorded and the jobs run; and the release day."""
    source = sqlite_path(parse_url(demo_url))
    assert source is not None
    shutil.copyfile(source, target)
    manifest = json.loads(source.with_suffix(".manifest.json").read_text(encoding="utf-8"))
    released_on = date.fromisoformat(manifest["release"]["date"])
    url = f"sqlite:///{target}"
    engine = make_engine(url)
    try:
        releases.add_release(engine, released_on, manifest["release"]["label"], now=int(now.timestamp()))
    finally:
        engine.dispose()
    run_the_jobs(url, now)
    return url, released_on


def bad_rows(url: str, now: datetime) -> dict[str, int | str]:
    """A small installation whose rows runrecord must survive, then the jobs; returns what a test looks for.

    A run record and card outcomes that are not JSON, write targets that are not JSON or name no table, a
    write to a table the database lacks, a stuck conversation and a failed turn with its error code.
    """
    engine = make_engine(url)
    try:
        init_db(engine, with_upstream=True)
        planted = _plant(engine, int(now.timestamp()))
    finally:
        engine.dispose()
    run_the_jobs(url, now)
    return planted


def _plant(engine: Engine, now: int) -> dict[str, int | str]:
    t0 = now - 20 * DAY
    with engine.begin() as connection:
        site = Installation(connection, seed=7)
        page = site.page("Import", at=t0 - 30 * DAY, by=EDITORS[0])
        broken = site.conversation(configuration="content-assistant", at=t0, page=page, editor=EDITORS[0])
        broken.user("Räume die importierten Seiten auf.", at=t0)
        run = broken.run()
        run.propose("update_record", page, fields=("title",))
        run.approve(at=run.now + 20)
        run.propose("update_record", page, fields=("title",))
        run.approve(at=run.now + 20, raw_target="{not json")
        run.propose("update_record", page, fields=("title",))
        run.approve(
            at=run.now + 20, raw_target={"writeTargetTable": "pages; DROP TABLE pages", "writeTargetUid": 1}
        )
        gone = site.missing_table_record("tx_news_domain_model_news", 77)
        run.propose("update_record", gone, fields=("title",))
        run.approve(at=run.now + 20)
        run.answer("Erledigt, alles gespeichert.")
        run.finish()
        broken.run_record_override = "{this is not json"
        broken.card_outcomes_override = "[{broken"
        broken.close()

        stuck = site.conversation(
            configuration="seo-assistant", at=now - 2 * DAY, page=page, editor=EDITORS[1]
        )
        stuck.user("Prüfe die SEO-Felder.", at=now - 2 * DAY)
        stuck.stuck("processing", since=now - 2 * DAY + 5)
        stuck.close()

        failed = site.conversation(
            configuration="seo-assistant", at=now - 3 * DAY, page=page, editor=EDITORS[2]
        )
        failed.user("Schreib einen Teaser.", at=now - 3 * DAY)
        attempt = failed.run()
        attempt.fail_before_steps()
        failed.fail(
            "providerNotConfigured",
            "API key identifier is required for provider OpenAI",
            at=now - 3 * DAY + 9,
        )
        failed.close()
        site.finish()
    return {
        "broken_conversation": broken.uid,
        "broken_run": run.uuid,
        "stuck_conversation": stuck.uid,
        "failed_conversation": failed.uid,
    }


def now_utc(year: int, month: int, day: int) -> datetime:
    """Midnight UTC of a day."""
    return datetime(year, month, day, tzinfo=UTC)
