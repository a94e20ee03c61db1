"""`runrecord generate`: a realistic installation, written through the upstream tables only.

The target must be empty. A SQLite file is written under a temporary name and moved into place only when
complete; on a server, a failure drops every table the run created. Either way a failed generate leaves
nothing behind. Conversation 1 is the story of 000_…, conversation 2 holds the bad rows, and the last one
(from three conversations on) is a conversation whose skill keeps a transcript of its own. Between the
others, in time order, come the tours of an SEO campaign in the canary's first weeks, on top of the
conversations asked for (story.CAMPAIGN_TOURS_PER_CONVERSATION). Beside the database it writes a
manifest of what it planted: the expected observed outcome of every run, the answers that claim a change
the run never made, those the chat flagged although core's claim rule does not (notice_agreement), the
release date, the canary and the campaign.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Engine, delete
from sqlalchemy.engine import URL
from sqlalchemy.schema import DropTable

from adapters import schema
from adapters.database import (
    RunrecordError,
    describe,
    make_engine,
    parse_url,
    reported,
    sqlite_path,
    table_names,
)
from adapters.history import oldest_retained_tstamp
from core.window import window_closed
from data.agent_run import Write
from data.builder import HistoryOrder, Installation
from data.fates import DAY, Expected, RecordReading, expected_write, run_outcome
from data.own_transcript import alt_text_story
from data.processes import HistoryPlan, ProcessingChoice, Worker
from data.scenarios import SCENARIOS, bad_rows, campaign_tour, seo_tour_story
from data.story import (
    CAMPAIGN_TOURS_PER_CONVERSATION,
    CAMPAIGN_WEEK_WEIGHTS,
    CANARY_CONFIGURATION,
    CANARY_EDIT_SHARE,
    CANARY_PROMOTED_SHARE,
    CANARY_SHARE,
    EDITORS,
    SEO_CONFIGURATION,
    Planted,
    Rollout,
    Story,
    Writer,
)

FLUSH_EVERY_CONVERSATIONS = 500  # records are written once their conversation's story is complete
# sys_history rows are numbered by their real moment (builder.HistoryOrder.MOMENTS) when a flush has passed
# them: a conversation's records are created up to 30 days before it (story.Writer.page), and the everyday
# conversations start within an hour of their order, so no row inserted more than this before the newest
# conversation is still to come; except the last story's, told at its fixed date (LAST_STORY_DAYS).
HISTORY_LOOKBACK_S = 31 * DAY
LAST_STORY_DAYS = 10  # the alt-text conversation, told last, starts this many days before Story.week
CLI_USER_UID = EDITORS[-1] + 1  # the _cli_ backend user, beside the editors


@dataclass(frozen=True)
class Progress:
    conversations: int
    total: int
    rows: int
    seconds: float

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Summary:
    """Counts of what was planted, for the manifest and the command's last line."""

    conversations: int = 0
    runs: int = 0
    writes: int = 0
    runs_by_outcome: dict[str, int] = field(default_factory=dict)  # runs whose window has closed by now
    writes_by_outcome: dict[str, int] = field(default_factory=dict)
    unknown_by_reason: dict[str, int] = field(default_factory=dict)
    runs_inside_window: int = 0
    claims_unwritten: int = 0
    # Answers flagged nothingSaved that core's claim rule does not flag (story.WIDER_FLAGGED), and the
    # first completed answer stored with the notice: what notice_agreement is short of 100% by, and from when.
    notice_disagreements: int = 0
    first_notice_at: int | None = None
    stuck_conversations: int = 0
    campaign_tours: int = 0
    # How the chat's processes stamped the AI rows (processes.ProcessingChoice), and the history cases planted
    # beside the fates (story.KEPT_RECORD_CASES and the rest), counted over every write and conversation.
    writes_by_processing: dict[str, int] = field(default_factory=dict)
    worker_writes_with_a_restart_in_their_window: int = 0
    planted_cases: dict[str, int] = field(default_factory=dict)
    # Writes whose own row, as the rules match it, is another row than the one the write inserted.
    own_rows_misread: int = 0


@dataclass(frozen=True)
class GenerateReport:
    target: str
    summary: Summary
    rows: int
    seconds: float
    manifest: Path | None

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


def default_manifest(url: URL) -> Path | None:
    """The manifest beside a SQLite file (demo.sqlite → demo.manifest.json); none for a server."""
    path = sqlite_path(url)
    return None if path is None else path.with_suffix(".manifest.json")


def generate(
    url: str,
    *,
    create_tables: Callable[[Engine], object],
    conversations: int,
    seed: int,
    now: datetime,
    window_days: int = 7,
    manifest: Path | None = None,
    progress: Callable[[Progress], None] | None = None,
    processing: ProcessingChoice = ProcessingChoice.MIXED,
) -> GenerateReport:
    """Write a deterministic installation of `conversations` conversations, and the SEO campaign's tours
    (campaign_tours), into an empty database.

    `create_tables(engine)` creates every table, upstream and ours, on the empty database first (the
    migrations are the jobs' to run: jobs.schema_setup.init_installation); a failure of it, as of anything
    after it, leaves no database behind. `processing` is how the chat runs the turns of every conversation
    (processes.ProcessingChoice), which decides how its sys_history rows are stamped.
    """
    if conversations < 2:
        raise RunrecordError("--conversations must be at least 2 (conversation 1 and the bad rows)")
    target = parse_url(url)
    story = Story.around(int(now.timestamp()), window_s=window_days * DAY)
    tours = campaign_tours(conversations)
    total = conversations + tours
    started = time.perf_counter()
    with _empty_target(target) as engine, _manifest_writer(manifest) as runs_out:
        create_tables(engine)
        summary = Summary()
        with reported(engine, "writing the installation"), engine.begin() as connection:

            def flushed(rows: int) -> None:
                if progress is not None:
                    done = summary.conversations
                    progress(Progress(done, total, rows, time.perf_counter() - started))

            site = Installation(connection, seed=seed, on_flush=flushed, history_order=HistoryOrder.MOMENTS)
            plans = _plans(site, story, seed, processing)
            rng = random.Random(seed)
            # The answers the chat flags under a wider word list (story.WIDER_FLAGGED) are drawn from a
            # stream of their own, so that the main stream draws what it drew before they were planted.
            notices = random.Random(f"notices:{seed}")
            # Which SEO tours use the canary, and its edits (story.CANARY_CONFIGURATION): a stream of
            # their own too.
            canary = Rollout(random.Random(f"canary:{seed}"))
            # The SEO campaign's tours are written between the everyday conversations as their times come, so
            # that uids follow time as in an installation; from streams of their own, so that the main
            # stream draws what it drew before they were planted.
            campaign = Campaign(site, story, tours, seed, plans.campaign)
            summary.campaign_tours = tours
            for index in range(conversations):
                written = _conversations(
                    site, story, rng, index, conversations, seed, notices, canary, campaign, plans
                )
                for planted in written:
                    _record(planted, story, summary, runs_out, plans)
                    _flush_now_and_then(site, summary.conversations, story, planted.at)
            for planted in campaign.due(None):  # two conversations have no last one for the tours to precede
                _record(planted, story, summary, runs_out, plans)
            site.finish()
            connection.execute(delete(schema.sys_history).where(schema.sys_history.c.tstamp < story.horizon))
            oldest = oldest_retained_tstamp(connection)
            rows = site.rows.written
        seconds = time.perf_counter() - started
        if progress is not None:
            progress(Progress(total, total, rows, seconds))
        if manifest is not None:
            _write_summary(manifest, story, seed, summary, oldest, target)
    return GenerateReport(describe(target), summary, rows, seconds, manifest)


def campaign_tours(conversations: int) -> int:
    """How many tours the SEO campaign of an installation of `conversations` everyday conversations holds."""
    return round(conversations * CAMPAIGN_TOURS_PER_CONVERSATION)


@dataclass(frozen=True)
class Plans:
    """The history plans of the installation's streams of conversations, sharing one worker."""

    everyday: HistoryPlan
    campaign: HistoryPlan
    stories: HistoryPlan  # the stories told at fixed dates: their processes, no planted case
    worker: Worker
    cli_user: int


def _plans(site: Installation, story: Story, seed: int, processing: ProcessingChoice) -> Plans:
    """The backend users, the worker and the plans; each from a random stream of its own."""
    for number, editor in enumerate(EDITORS, start=1):
        site.backend_user(f"redaktion{number:02d}", uid=editor, at=story.start - 60 * DAY)
    cli = site.cli_user(uid=CLI_USER_UID, at=story.start - 60 * DAY)
    worker = Worker(random.Random(f"worker:{seed}"), since=story.start - 40 * DAY, until=story.now)

    def plan(stream: str, *, cases: bool = True) -> HistoryPlan:
        return HistoryPlan(worker, seed=stream, choice=processing, cli_user=cli, editors=EDITORS, cases=cases)

    # The campaign's tours run as the other conversations do, without planted cases: they hold most of the SEO
    # tours of the canary's weeks, whose EDITED rates the canary is compared on (CANARY_CONFIGURATION).
    campaign = plan(f"campaign:{seed}", cases=False)
    return Plans(plan(str(seed)), campaign, plan(f"stories:{seed}", cases=False), worker, cli)


def _flush_now_and_then(site: Installation, written: int, story: Story, at: int) -> None:
    if written % FLUSH_EVERY_CONVERSATIONS == 0:
        last_story = story.week - LAST_STORY_DAYS * DAY
        site.flush(history_before=min(at, last_story) - HISTORY_LOOKBACK_S)


class Campaign:
    """The SEO campaign's tours in time order: each week's share of them (CAMPAIGN_WEEK_WEIGHTS) spread over
    the week, each written once the everyday conversations have reached its time."""

    def __init__(self, site: Installation, story: Story, tours: int, seed: int, plan: HistoryPlan) -> None:
        self.site = site
        self.story = story
        self.plan = plan
        self.rng = random.Random(f"campaign:{seed}")
        self.canary = Rollout(random.Random(f"campaign-canary:{seed}"))
        times = [
            week + int(7 * DAY * n / count) + self.rng.randint(0, 1800)
            for week, count in zip(story.campaign_weeks(), _per_week(tours), strict=True)
            for n in range(count)
        ]
        self._times = deque(sorted(times))

    def due(self, before: int | None) -> Iterator[Planted]:
        """The tours that start before `before` and are not written yet; with None, every one left."""
        while self._times and (before is None or self._times[0] < before):
            at = self._times.popleft()
            yield campaign_tour(
                Writer(self.site, self.story, self.rng, at, canary=self.canary, plan=self.plan)
            )


def _per_week(tours: int) -> list[int]:
    """The campaign's tours split by CAMPAIGN_WEEK_WEIGHTS, the rounding left to the last week."""
    total = sum(CAMPAIGN_WEEK_WEIGHTS)
    counts = [tours * weight // total for weight in CAMPAIGN_WEEK_WEIGHTS[:-1]]
    return [*counts, tours - sum(counts)]


def _conversations(
    site: Installation,
    story: Story,
    rng: random.Random,
    index: int,
    total: int,
    seed: int,
    notices: random.Random,
    canary: Rollout,
    campaign: Campaign,
    plans: Plans,
) -> Iterator[Planted]:
    """The conversation of `index`, after the campaign's tours that start before it."""
    if index == 0:
        yield seo_tour_story(Writer(site, story, rng, story.week - 12 * DAY, plan=plans.stories))
    elif index == 1:
        yield bad_rows(Writer(site, story, rng, story.week - 20 * DAY, plan=plans.stories))
    elif index == total - 1:
        yield from campaign.due(None)
        # The last conversation draws from a random stream of its own, so that none before it depends on it.
        alt_text = random.Random(f"alt-text:{seed}")
        at = story.week - LAST_STORY_DAYS * DAY
        yield alt_text_story(Writer(site, story, alt_text, at, plan=plans.stories))
    else:
        span = story.week - 4 * 3600 - story.start
        at = story.start + int(span * index / total) + rng.randint(0, 3600)
        scenarios, weights = zip(*SCENARIOS, strict=True)
        scenario = rng.choices(scenarios, weights)[0]
        yield from campaign.due(at)
        yield scenario(Writer(site, story, rng, at, notices, canary, plans.everyday))


def _record(planted: Planted, story: Story, summary: Summary, out: IO[str] | None, plans: Plans) -> None:
    summary.conversations += 1
    for case, count in planted.cases.items():
        summary.planted_cases[case] = summary.planted_cases.get(case, 0) + count
    by_record: dict[str, list[Write]] = {}
    for run in planted.runs:
        for write in run.writes:
            by_record.setdefault(write.record.ref, []).append(write)
    readings = {
        ref: RecordReading(writes[0].record, writes, horizon=story.horizon, cli_user=plans.cli_user)
        for ref, writes in by_record.items()
    }
    summary.claims_unwritten += len(planted.claims_unwritten)
    summary.notice_disagreements += len(planted.notice_disagreements)
    summary.stuck_conversations += int(planted.stuck)
    claims = {uuid for _, uuid in planted.claims_unwritten}
    disagreements = {uuid for _, uuid in planted.notice_disagreements}
    for run in planted.runs:
        summary.runs += 1
        answer = run.completed_answer
        if answer is not None and answer[1] == "nothingSaved":
            first = summary.first_notice_at
            summary.first_notice_at = answer[0] if first is None else min(first, answer[0])
        expected: list[tuple[int, str, Expected]] = []
        for write in run.writes:
            reading = readings[write.record.ref]
            outcome = expected_write(write, reading, oldest_retained=story.horizon, window_s=story.window_s)
            expected.append((write.event_uid, write.record.ref, outcome))
            summary.own_rows_misread += int(reading.misread(write))
            if planted.processing is not None:
                _count(summary.writes_by_processing, planted.processing.value)
                if planted.processing == plans.worker.processing and plans.worker.restarted_between(
                    write.written_at, write.written_at + story.window_s
                ):
                    summary.worker_writes_with_a_restart_in_their_window += 1
        summary.writes += len(expected)
        last_write = max((w.written_at for w in run.writes), default=None)
        due = last_write is not None and window_closed(last_write, story.now, story.window_s)
        outcome: str | None = None
        if expected:
            outcome = run_outcome([e.outcome for _, _, e in expected])
            if due:
                _count(summary.runs_by_outcome, outcome)
                for _, _, e in expected:
                    _count(summary.writes_by_outcome, e.outcome)
                    if e.reason:
                        _count(summary.unknown_by_reason, e.reason)
            else:
                summary.runs_inside_window += 1
        if out is not None:
            line = {
                "run": run.uuid,
                "conversation": planted.conversation,
                "configuration": run.chat.configuration,
                "skill": run.chat.skill,
                "processing": None if planted.processing is None else planted.processing.value,
                "cases": dict(sorted(planted.cases.items())),
                "status": run.status,
                "last_write_at": last_write,
                "due": due,
                "outcome": outcome,
                "claims_unwritten": run.uuid in claims,
                "answer": None if answer is None else {"at": answer[0], "notice": answer[1]},
                "notice_disagrees": run.uuid in disagreements,
                "writes": [
                    {
                        "event": uid,
                        "record": ref,
                        "outcome": e.outcome,
                        "reason": e.reason,
                        "edit_scope": e.edit_scope,
                    }
                    for uid, ref, e in expected
                ],
            }
            out.write(json.dumps(line, separators=(",", ":")) + "\n")


def _count(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def _write_summary(
    manifest: Path, story: Story, seed: int, summary: Summary, oldest: int | None, target: URL
) -> None:
    def day(unix: int) -> str:
        return datetime.fromtimestamp(unix, UTC).date().isoformat()

    document: dict[str, Any] = {
        "database": describe(target),
        "seed": seed,
        "now": datetime.fromtimestamp(story.now, UTC).isoformat(),
        "window_days": story.window_s // DAY,
        "release": {
            "date": day(story.release),
            "label": "Prompt rule: claim a change only on a write result",
        },
        "notice_since": day(story.notice_since),
        "run_record_since": day(story.run_record_since),
        "canary": {
            "configuration": CANARY_CONFIGURATION,
            "stable": SEO_CONFIGURATION,
            "since": day(story.canary_since),
            "share_of_seo_tours": CANARY_SHARE,
            "promoted": day(story.canary_promoted),
            "share_of_seo_tours_promoted": CANARY_PROMOTED_SHARE,
            "edit_share_of_kept_records": CANARY_EDIT_SHARE,
        },
        "campaign": {
            "weeks": [day(week) for week in story.campaign_weeks()],
            "tours": summary.campaign_tours,
        },
        "history_horizon": oldest,
        "conversation_1": {
            "uid": 1,
            "story": "000_6007b8db2f9b43d2.txt: six approved cards on one page, then a denial",
        },
        "summary": summary.__dict__,
        "runs_file": _runs_file(manifest).name,
    }
    manifest.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _check_manifest(manifest: Path) -> None:
    """The manifest can be written where it is to go; RunrecordError, before anything is written, if not."""
    folder = manifest.parent
    if not folder.exists():
        problem = f"{folder} does not exist"
    elif not folder.is_dir():
        problem = f"{folder} is not a directory"
    elif not os.access(folder, os.W_OK | os.X_OK):
        problem = f"{folder} is not writable"
    elif manifest.is_dir():
        problem = "it is a directory"
    else:
        return
    raise RunrecordError(f"cannot write the manifest {manifest}: {problem}")


def _runs_file(manifest: Path) -> Path:
    return manifest.with_name(manifest.name.removesuffix(".json") + ".runs.jsonl")


@contextmanager
def _manifest_writer(manifest: Path | None) -> Iterator[IO[str] | None]:
    if manifest is None:
        yield None
        return
    _check_manifest(manifest)  # entered after the target was found usable, before anything is written
    runs_file = _runs_file(manifest)
    partial = runs_file.with_name(runs_file.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8") as out:
            yield out
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, runs_file)


@contextmanager
def _empty_target(target: URL) -> Iterator[Engine]:
    """An engine on the empty target; nothing of a failed run is left behind."""
    path = sqlite_path(target)
    if path is not None:
        with _sqlite_file(target, path) as engine:
            yield engine
        return
    engine = make_engine(target)
    existing = table_names(engine) & (set(schema.upstream.tables) | set(schema.ours.tables))
    if existing:
        engine.dispose()
        raise RunrecordError(
            f"{describe(target)} is not empty (it has {', '.join(sorted(existing))}); generate writes a new "
            "installation into an empty database"
        )
    try:
        yield engine
    except BaseException:
        _drop_created(engine)
        raise
    finally:
        engine.dispose()


@contextmanager
def _sqlite_file(target: URL, path: Path) -> Iterator[Engine]:
    if path.exists() and path.stat().st_size > 0:
        raise RunrecordError(
            f"{path} exists and is not empty; generate writes a new installation (remove it first)"
        )
    if not path.parent.is_dir():
        raise RunrecordError(f"cannot write {path}: {path.parent} is not a directory")
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    partial.unlink(missing_ok=True)
    engine = make_engine(target.set(database=str(partial)))
    try:
        yield engine
        engine.dispose()
        os.replace(partial, path)
    finally:
        engine.dispose()
        for leftover in (partial, partial.with_name(partial.name + "-journal")):
            leftover.unlink(missing_ok=True)


def _drop_created(engine: Engine) -> None:
    names = table_names(engine)
    with engine.begin() as connection:
        for table in [*schema.ours.sorted_tables, *schema.upstream.sorted_tables]:
            if table.name in names:
                connection.execute(DropTable(table))
        if schema.VERSION_TABLE in names:
            connection.exec_driver_sql(f"DROP TABLE {schema.VERSION_TABLE}")
