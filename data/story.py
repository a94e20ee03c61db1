"""What every scenario of the demo installation shares: the installation-wide `Story` (the release, when the
chat began storing notices and run records, the history horizon), its configurations, editors and wordings,
what one conversation planted (`Planted`), and the `Writer` that tells one conversation with the builder."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from core.outcomes import Action
from core.periods import Grain, period_start, unix_of
from data.agent_run import Run, Write
from data.builder import Installation
from data.chat import Conversation, Processing
from data.fates import DAY, TEXT_FIELDS, Fate, PlantedFate, apply_fate, canary_edit
from data.processes import HistoryPlan
from data.records import INTEGER_FIELDS, Record

SEO_CONFIGURATION = "seo-assistant"
CONTENT_CONFIGURATION = "content-assistant"
# A canary of the SEO configuration (ADR-156's second criterion, 003_… "What this does not build"): from
# Story.canary_since on it takes CANARY_SHARE of the SEO tours, and from Story.canary_promoted on, when it is
# promoted, CANARY_PROMOTED_SHARE (the stable configuration keeps the rest as a holdback). Tours are dealt in
# turn (Rollout), so that each week splits as its share says. A record the canary wrote whose fate would
# leave it accepted (CANARY_EDITED_FATES: kept, moved, changed only after the window) is edited by hand with
# CANARY_EDIT_SHARE, within CANARY_EDIT_WITHIN_S of the write — far more often and far earlier than the
# stable configuration's edits, which fall anywhere in the window. Its draws come from a random stream of
# its own, so the main stream is the same.
CANARY_CONFIGURATION = "seo-assistant-canary"
CANARY_SHARE = 0.1
CANARY_PROMOTED_SHARE = 0.9
CANARY_EDIT_SHARE = 0.9
CANARY_EDIT_WITHIN_S = 12 * 3600
CANARY_WEEKS = 5  # the canary starts on the Monday of the week this many weeks before now
# Promoted three weeks after its start. With the default 7-day window that is the newest closed week (the
# week holding now − 7 days starts four weeks after the canary, and is the first open one), so that the alert
# check after a measurement sets the promotion's week against the four before it.
CANARY_PROMOTED_AFTER_WEEKS = 3
CANARY_EDITED_FATES = frozenset({Fate.KEPT, Fate.MOVED, Fate.EDITED_AFTER_WINDOW, Fate.DELETED_AFTER_WINDOW})
# The SEO campaign: in the canary's first four weeks, CAMPAIGN_TOURS_PER_CONVERSATION one-card SEO tours per
# everyday conversation of the installation, more each week towards its deadline (CAMPAIGN_WEEK_WEIGHTS).
# Without it the canary and the stable configuration would have about 60 runs between them in those weeks,
# and a difference of 5 points cannot be told apart on fewer than some 500 a side (core/sample_size.py); the
# promotion's week holds enough of them that its move is told apart from the three weeks before.
CAMPAIGN_TOURS_PER_CONVERSATION = 1.1
CAMPAIGN_WEEK_WEIGHTS = (1, 2, 3, 4)
CAMPAIGN_REQUEST = "Prüfe den Seitentitel dieser Seite für die SEO-Kampagne."
SEO_SKILL = "seo-check"
EDITORS = tuple(range(90_001, 90_041))  # be_user ids: planted so that a test can prove none leaks

# Conversation 1 (000_…, "Context"): six fields of one page, each a card the editor approved.
SEO_TOUR_FIELDS = (
    ("seo_title", "Seitentitel"),
    ("og_image", "OpenGraph-Bild"),
    ("og_title", "OpenGraph-Titel"),
    ("og_description", "OpenGraph-Beschreibung"),
    ("twitter_title", "X-Titel"),
    ("twitter_description", "X-Beschreibung"),
)

FATE_WEIGHTS: tuple[tuple[Fate, int], ...] = (
    (Fate.KEPT, 48),
    (Fate.EDITED_SAME, 12),
    (Fate.EDITED_OTHER, 10),
    (Fate.RELEASED, 5),
    (Fate.MOVED, 3),
    (Fate.DELETED, 4),
    (Fate.DELETED_THEN_RESTORED, 2),
    (Fate.HARD_DELETED, 2),
    (Fate.EDITED_AFTER_WINDOW, 8),
    (Fate.DELETED_AFTER_WINDOW, 6),
)

CLAIMS = (
    "Erledigt! Ich habe die Überschrift geändert.",
    "Der Seitentitel wurde aktualisiert und gespeichert.",
    "Done — I updated the page description.",
    "Ich habe den Text übernommen und gespeichert.",
    "The teaser has been changed as requested.",
)
PLAIN_ANSWERS = (
    "Ich schlage vor, den Titel kürzer zu fassen. Soll ich das übernehmen?",
    "Die Seite hat bereits eine Beschreibung mit 142 Zeichen.",
    "Here is a suggestion for the meta description; tell me if I should apply it.",
    "Dafür finde ich kein passendes Werkzeug.",
)
# Answers the chat stored with the nothingSaved notice although none of core's claim words is in them, as a
# chat reading a wider word list ("fertig", "live") would: the planted disagreements of notice_agreement.
WIDER_FLAGGED = (
    "Fertig, die Seite ist jetzt live.",
    "The new heading is live now.",
)
# The share of plain answers after notice_since that the chat flags so; drawn from the Writer's own
# `notices` stream, so that the main stream, and every other count of the demo, is the same without them.
WIDER_FLAGGED_SHARE = 0.1
DENIAL = (
    "Hier wurde nichts geprüft oder geändert. Meine früheren Antworten waren irreführend, "
    "die SEO-Tour hat nicht stattgefunden."
)


@dataclass(frozen=True)
class Story:
    """Dates that hold for the whole installation (unix seconds)."""

    now: int
    window_s: int
    week: int  # the Monday 00:00 UTC of now's ISO week: the timeline hangs from it (Story.around)
    start: int  # the first conversation
    horizon: int  # sys_history rows before this were trimmed by the installation's garbage collection
    release: int  # after it, claimed-but-unwritten answers become rarer
    notice_since: int  # the chat stores the nothingSaved notice from here on (001_…)
    run_record_since: int  # the chat stores run_record from here on (000_…)
    canary_since: int  # SEO tours may use CANARY_CONFIGURATION from here on
    canary_promoted: int  # from here on it takes CANARY_PROMOTED_SHARE of them

    @classmethod
    def around(cls, now: int, *, window_s: int) -> Story:
        """The default dates, relative to the start of `now`'s ISO week: a seed writes the same installation,
        shifted by whole weeks, whatever the hour and the weekday, so that every week holds the same
        conversations and a verdict cannot depend on when the installation was built; the open week is
        left empty."""
        week = unix_of(period_start(now, Grain.WEEK))
        canary_since = week - CANARY_WEEKS * 7 * DAY
        return cls(
            now=now,
            window_s=window_s,
            week=week,
            start=week - 120 * DAY,
            horizon=week - 100 * DAY,
            # A Monday, as `release add DATE` marks a day: a comparison's after side begins there, and no
            # week straddles it.
            release=week - 49 * DAY,
            notice_since=week - 80 * DAY,
            run_record_since=week - 30 * DAY,
            # The Monday of the week five weeks back: no week holds a handful of canary runs and no more.
            canary_since=canary_since,
            canary_promoted=canary_since + CANARY_PROMOTED_AFTER_WEEKS * 7 * DAY,
        )

    def canary_share(self, at: int) -> float:
        """The share of the SEO tours started at `at` that the canary takes."""
        if at < self.canary_since:
            return 0.0
        return CANARY_PROMOTED_SHARE if at >= self.canary_promoted else CANARY_SHARE

    def campaign_weeks(self) -> list[int]:
        """The Mondays of the SEO campaign's weeks (the canary's first ones)."""
        return [self.canary_since + week * 7 * DAY for week in range(len(CAMPAIGN_WEEK_WEIGHTS))]


class Rollout:
    """Which SEO tours use the canary, dealt in turn at the share of their date, and the random stream of its
    edits."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._credit = 0.0

    def takes_next_tour(self, share: float) -> bool:
        """True for `share` of the tours asked about, spread evenly over them."""
        self._credit += share
        if self._credit >= 1.0:
            self._credit -= 1.0
            return True
        return False


# A later nr-llm passes the run's uuid as the DataHandler correlation scope: the share of conversations whose
# runs name themselves in their rows.
NAMED_RUN_SHARE = 0.04
# The chatting editor edits the page by hand while the next card of a tour waits: the share of SEO tours with
# at least two approved cards that get one such edit, this many seconds after a write (more than the 2 s of a
# save, less than the next card's approval).
HAND_EDIT_BETWEEN_WRITES_SHARE = 0.15
HAND_EDIT_AFTER_WRITE_S = (4, 9)
# A content edit whose run, after the approved write, thinks for more model rounds and writes the text again
# in the same segment: its row is stamped when the approval's process started, a minute or two before it.
LATER_ROUND_SHARE = 0.25
LATER_ROUND_MS = (20_000.0, 45_000.0)
FOLLOW_UP_REWRITE_SHARE = 0.5  # follow_up: the second run rewrites the first run's field too
# What else may happen to a record the editor otherwise kept (Fate.KEPT), each in the window of its writes
# unless said: (case, share of kept records).
KEPT_RECORD_CASES: tuple[tuple[str, float], ...] = (
    ("reverted", 0.08),  # the history module's rollback: every AI-written field back to its value before
    ("draft_published_inside", 0.06),  # edited as a draft in a workspace, published in the window
    ("draft_published_after", 0.06),  # the draft edited in the window, published after it
    ("cli_same_field", 0.06),  # a scheduler task (the _cli_ user) overwrites a field the AI wrote
    ("cli_other_field", 0.06),  # … another field
)
DRAFT_WORKSPACE = 1
CLI_STARTED_BEFORE_S = (5, 900)  # a scheduler task's rows are stamped when its command started


@dataclass
class Planted:
    """What one conversation planted, for the manifest."""

    conversation: int
    at: int = 0  # when the conversation started
    runs: list[Run] = field(default_factory=list)
    fates: dict[str, tuple[Record, PlantedFate]] = field(default_factory=dict)  # by record ref
    claims_unwritten: list[tuple[int, str]] = field(default_factory=list)  # (message sorting, run uuid)
    # Answers flagged nothingSaved that core's claim rule does not flag (WIDER_FLAGGED): (sorting, run uuid)
    notice_disagreements: list[tuple[int, str]] = field(default_factory=list)
    bad_rows: list[str] = field(default_factory=list)
    stuck: bool = False
    processing: Processing | None = None  # None: AI rows stamped as they are written
    cases: Counter[str] = field(default_factory=Counter)  # the planted history cases, by name


class Writer:
    """Tells one conversation: picks times, editors and fates, and records what it planted."""

    def __init__(
        self,
        site: Installation,
        story: Story,
        rng: random.Random,
        at: int,
        notices: random.Random | None = None,
        canary: Rollout | None = None,
        plan: HistoryPlan | None = None,
    ) -> None:
        self.site = site
        self.plan = plan  # the processes and the planted history cases; None: neither
        self.story = story
        self.rng = rng
        self.notices = notices  # decides WIDER_FLAGGED answers; None: the chat flags none so
        self.canary = canary  # decides which SEO tours use the canary and its edits; None: none does
        self.on_canary = False
        self.at = at
        self.editor = rng.choice(EDITORS)
        self.planted: Planted | None = None
        self._written: dict[str, list[Write]] = {}

    def open(self, *, configuration: str, skill: str = "", page: Record | None = None) -> Conversation:
        chat = self.site.conversation(
            configuration=configuration, at=self.at, skill=skill, page=page, editor=self.editor
        )
        chat.stores_run_record = self.at >= self.story.run_record_since
        self.planted = Planted(chat.uid, self.at)
        if self.plan is not None:
            chat.processes = self.plan.processes()
            chat.names_runs = self.plan.chance(NAMED_RUN_SHARE)
            self.planted.processing = chat.processes.processing
            if chat.names_runs:
                self.planted.cases["run_named_by_correlation_id"] += 1
        return chat

    def page(self, title: str, *, fate: Fate | None = None, history: bool = True) -> tuple[Record, Fate]:
        chosen = fate or self.fate()
        hidden = chosen == Fate.RELEASED
        return self.site.page(
            title, at=self.at - 30 * DAY, hidden=hidden, by=self.editor, history=history
        ), chosen

    def fate(self) -> Fate:
        fates = [fate for fate, _ in FATE_WEIGHTS]
        return self.rng.choices(fates, [weight for _, weight in FATE_WEIGHTS])[0]

    def seo_configuration(self) -> str:
        """The SEO tour's configuration: the canary for its share of the tours (Story.canary_share)."""
        canary = self.canary
        share = self.story.canary_share(self.at)
        self.on_canary = canary is not None and share > 0 and canary.takes_next_tour(share)
        return CANARY_CONFIGURATION if self.on_canary else SEO_CONFIGURATION

    def track(self, run: Run) -> Run:
        assert self.planted is not None
        self.planted.runs.append(run)
        return run

    def settle(self, record: Record, fate: Fate) -> None:
        """Plant the record's fate after the last write any run made to it."""
        assert self.planted is not None
        writes = [w for run in self.planted.runs for w in run.writes if w.record is record]
        if not writes or record.gone:
            self.planted.fates[record.ref] = (record, PlantedFate(Fate.KEPT, 0, frozenset()))
            return
        planted = apply_fate(
            self.site,
            record,
            fate,
            first_write_at=min(w.written_at for w in writes),
            last_write_at=max(w.written_at for w in writes),
            window_s=self.story.window_s,
            rng=self.rng,
            editor=self.editor,
        )
        canary = self.canary
        kept = self.on_canary and canary is not None and planted.fate in CANARY_EDITED_FATES
        if kept and canary is not None and canary.rng.random() < CANARY_EDIT_SHARE:
            planted = canary_edit(
                self.site,
                record,
                first_write_at=min(w.written_at for w in writes),
                last_write_at=max(w.written_at for w in writes),
                window_s=self.story.window_s,
                within_s=CANARY_EDIT_WITHIN_S,
                rng=canary.rng,
                editor=self.editor,
            )
        plan = self.plan
        if planted.fate == Fate.KEPT and plan is not None and plan.cases and all(w.readable for w in writes):
            self._kept_record_case(record, writes)
        self.planted.fates[record.ref] = (record, planted)

    def _kept_record_case(self, record: Record, writes: list[Write]) -> None:
        """Perhaps one of KEPT_RECORD_CASES for a record the editor otherwise kept."""
        plan, planted = self.plan, self.planted
        assert plan is not None and planted is not None
        roll = plan.plants.random()
        case = None
        for name, share in KEPT_RECORD_CASES:
            if roll < share:
                case = name
                break
            roll -= share
        if case is None:
            return
        first = min(w.written_at for w in writes)
        last = max(w.written_at for w in writes)
        room = max(first + self.story.window_s - last - 60, 120)
        inside = last + plan.plants.randint(60, room)
        written = sorted(record.ai_fields)
        other = next(name for name in TEXT_FIELDS[record.table] if name not in record.ai_fields)
        site = self.site
        # Every draw is made whether or not its act lies after the installation's end, so that the stream
        # draws what it drew before; a case is counted when each of its rows was planted.
        if case == "reverted":
            if not site.acted(inside):
                return
            site.human_edit(
                record, {name: record.before_ai[name] for name in written}, at=inside, by=self.editor
            )
        elif case.startswith("draft_published"):
            name = plan.plants.choice((*written, other))
            drafted = last + plan.plants.randint(60, max(room // 2, 61))
            if case == "draft_published_inside":
                published = drafted + plan.plants.randint(60, max(last + room - drafted, 61))
            else:
                published = last + self.story.window_s + plan.plants.randint(DAY // 2, 10 * DAY)
            publisher = plan.plants.choice(plan.editors)
            # Until the publish the draft's rows are the version's, another uid (core.workspaces): the
            # record has them only once it is published.
            if not site.acted(published):
                return
            # The first edit in a workspace copies the live record into a draft (DataHandler::insertDB: an
            # add row of every field), then saves the edit on the copy; the publish points both at the record.
            copy = {**record.values, "t3ver_oid": record.uid, "t3ver_wsid": DRAFT_WORKSPACE}
            site.history(record, Action.ADD, at=drafted, new=copy, by=self.editor, workspace=DRAFT_WORKSPACE)
            site.history(
                record,
                Action.MODIFY,
                at=drafted,
                new={name: _typed(name, "Entwurf")},
                old={name: record.value(name)},
                by=self.editor,
                workspace=DRAFT_WORKSPACE,
            )
            record.values[name] = _typed(name, "Entwurf")
            site.history(record, Action.PUBLISH, at=published, by=publisher)
        else:
            name = plan.plants.choice(written) if case == "cli_same_field" else other
            started = inside - plan.plants.randint(*CLI_STARTED_BEFORE_S)
            if not site.acted(inside):
                return
            old = {name: record.value(name)}
            record.values[name] = _typed(name, "vom Import")
            site.history(
                record,
                Action.MODIFY,
                at=started,
                moment=inside,
                new={name: _typed(name, "vom Import")},
                old=old,
                by=plan.cli_user,
            )
        planted.cases[case] += 1

    def hand_edit_between_writes(self, record: Record, after: Write) -> None:
        """Perhaps the chatting editor's own edit of the record while the next card waits."""
        plan, planted = self.plan, self.planted
        if plan is None or planted is None or planted.cases["hand_edit_between_writes"]:
            return
        if not plan.chance(HAND_EDIT_BETWEEN_WRITES_SHARE):
            return
        at = after.written_at + plan.plants.randint(*HAND_EDIT_AFTER_WRITE_S)
        other = next(name for name in TEXT_FIELDS[record.table] if name not in record.ai_fields)
        name = plan.plants.choice((*after.fields, other))
        # Counted as planned, planted or not (after the installation's end it is not): the next write draws
        # what it drew before.
        self.site.human_edit(record, {name: _typed(name, "von Hand")}, at=at, by=self.editor)
        planted.cases["hand_edit_between_writes"] += 1

    def claim_probability(self) -> float:
        return 0.24 if self.at < self.story.release else 0.06

    def answer_claim(self, run: Run) -> None:
        """An answer claiming a change the run never made (001_…, 'Context')."""
        assert self.planted is not None
        notice = "nothingSaved" if self.at >= self.story.notice_since else None
        position = run.answer(self.rng.choice(CLAIMS), notice=notice)
        self.planted.claims_unwritten.append((position, run.uuid))

    def answer_plain(self, run: Run, text: str) -> None:
        """An answer that claims nothing; after notice_since a few are flagged as under a wider word list."""
        assert self.planted is not None
        notices = self.notices
        if notices is None or self.at < self.story.notice_since or notices.random() >= WIDER_FLAGGED_SHARE:
            run.answer(text)
            return
        position = run.answer(notices.choice(WIDER_FLAGGED), notice="nothingSaved")
        self.planted.notice_disagreements.append((position, run.uuid))

    def close(self, chat: Conversation) -> Planted:
        """Write the conversation and return what it planted."""
        assert self.planted is not None
        chat.close()
        return self.planted


Scenario = Callable[[Writer], Planted]


def _typed(name: str, text: str) -> str | int:
    """A value an editor or a task sets: the text, or a number for an integer column (og_image, hidden)."""
    return 2 if name in INTEGER_FIELDS else text
