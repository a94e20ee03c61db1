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

import os
import random
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

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
from data.builder import HistoryOrder, Installation
from data.fates import DAY
from data.manifest import Summary, manifest_writer, record_planted, write_summary
from data.own_transcript import alt_text_story
from data.processes import HistoryPlan, ProcessingChoice, Worker
from data.scenarios import SCENARIOS, bad_rows, campaign_tour, seo_tour_story
from data.story import (
    CAMPAIGN_TOURS_PER_CONVERSATION,
    CAMPAIGN_WEEK_WEIGHTS,
    EDITORS,
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
# The editors' and the _cli_ user's accounts are created this many days before the first conversation: the
# installation's oldest rows.
ACCOUNTS_BEFORE_START_DAYS = 60
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
    first_row = story.start - ACCOUNTS_BEFORE_START_DAYS * DAY
    if first_row < 0:
        # The tables' stamps are Unix times: no row of an installation is older than 1970.
        span = story.week - first_row
        first = datetime.fromtimestamp(span, tz=UTC).date()
        earliest = first + timedelta(days=-first.weekday() % 7)  # the first week that starts late enough
        raise RunrecordError(
            f"--now {now.date().isoformat()} is too early: the installation's rows span the {span // DAY} "
            "days before the week of --now, which would begin before 1970; "
            f"give --now {earliest.isoformat()} or later"
        )
    tours = campaign_tours(conversations)
    total = conversations + tours
    started = time.perf_counter()
    with _empty_target(target) as engine, manifest_writer(manifest) as runs_out:
        create_tables(engine)
        summary = Summary()
        with reported(engine, "writing the installation"), engine.begin() as connection:

            def flushed(rows: int) -> None:
                if progress is not None:
                    done = summary.conversations
                    progress(Progress(done, total, rows, time.perf_counter() - started))

            site = Installation(
                connection, seed=seed, on_flush=flushed, history_order=HistoryOrder.MOMENTS, until=story.now
            )
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
                    record_planted(
                        planted, story, summary, runs_out, cli_user=plans.cli_user, worker=plans.worker
                    )
                    _flush_now_and_then(site, summary.conversations, story, planted.at)
            for planted in campaign.due(None):  # two conversations have no last one for the tours to precede
                record_planted(
                    planted, story, summary, runs_out, cli_user=plans.cli_user, worker=plans.worker
                )
            site.finish()
            connection.execute(delete(schema.sys_history).where(schema.sys_history.c.tstamp < story.horizon))
            oldest = oldest_retained_tstamp(connection)
            rows = site.rows.written
        seconds = time.perf_counter() - started
        if progress is not None:
            progress(Progress(total, total, rows, seconds))
        if manifest is not None:
            write_summary(manifest, story, seed, summary, oldest, target)
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
        site.backend_user(
            f"redaktion{number:02d}", uid=editor, at=story.start - ACCOUNTS_BEFORE_START_DAYS * DAY
        )
    cli = site.cli_user(uid=CLI_USER_UID, at=story.start - ACCOUNTS_BEFORE_START_DAYS * DAY)
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
    if path.is_dir():  # its size is its list of entries, however empty: not a sign of a database
        raise RunrecordError(
            f"{path} is a directory, not a SQLite file; generate writes a new installation into a file, "
            f"such as {path / 'demo.sqlite'}"
        )
    if path.exists() and not path.is_file():  # a FIFO or a device: replacing it would lose it
        raise RunrecordError(f"{path} is not a regular file; generate writes a new installation into a file")
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
