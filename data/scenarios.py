"""The conversations of the demo installation, each a small story told with the builder.

`Story` holds the installation-wide dates (the release, when the chat began storing notices and run
records, the history horizon); each scenario writes one conversation and returns what it planted.
Conversation 1 is the story of 000_6007b8db2f9b43d2.txt.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from core.periods import Grain, period_start, unix_of
from data.builder import Installation, Privacy, Record
from data.chat import Conversation, Run, Write
from data.fates import DAY, Fate, PlantedFate, apply_fate, canary_edit

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


@dataclass
class Planted:
    """What one conversation planted, for the manifest."""

    conversation: int
    runs: list[Run] = field(default_factory=list)
    fates: dict[str, tuple[Record, PlantedFate]] = field(default_factory=dict)  # by record ref
    claims_unwritten: list[tuple[int, str]] = field(default_factory=list)  # (message sorting, run uuid)
    # Answers flagged nothingSaved that core's claim rule does not flag (WIDER_FLAGGED): (sorting, run uuid)
    notice_disagreements: list[tuple[int, str]] = field(default_factory=list)
    bad_rows: list[str] = field(default_factory=list)
    stuck: bool = False


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
    ) -> None:
        self.site = site
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
        self.planted = Planted(chat.uid)
        return chat

    def page(self, title: str, *, fate: Fate | None = None, history: bool = True) -> tuple[Record, Fate]:
        chosen = fate or self.fate()
        hidden = chosen == Fate.RELEASED
        return self.site.page(
            title, at=self.at - 30 * DAY, hidden=hidden, by=self.editor, history=history
        ), chosen

    def fate(self) -> Fate:
        fates, weights = zip(*FATE_WEIGHTS, strict=True)
        return self.rng.choices(fates, weights)[0]

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
        self.planted.fates[record.ref] = (record, planted)

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


def seo_tour_story(w: Writer) -> Planted:
    """Conversation 1: six approved cards on one page, then 'was ist hier passiert?' and a denial."""
    page, _ = w.page("Produkte", fate=Fate.KEPT)
    chat = w.open(configuration=SEO_CONFIGURATION, skill=SEO_SKILL, page=page)
    chat.user("Starte den SEO-Check für diese Seite.", at=w.at)
    run = w.track(chat.run())
    run.display("chat_set_progress")
    run.llm("get_page_seo")
    run.tool("get_page_seo")
    for field_name, label in SEO_TOUR_FIELDS:
        run.say(f"Ich schlage als {label} „Produkte – Qualität aus Leipzig“ vor.")
        run.propose("update_page_seo", page, fields=(field_name,))
        run.approve(at=run.now + 45)
        run.display("chat_highlight_element")
    run.display("chat_set_progress")
    run.answer("Der SEO-Check ist abgeschlossen: alle sechs Felder sind gespeichert.")
    run.finish()
    chat.end_tour(at=run.now + 10)
    later = run.now + 3 * DAY
    chat.user("was ist hier passiert?", at=later)
    question = w.track(chat.run(at=later + 2))
    question.answer(DENIAL)
    question.finish()
    chat.last_page_id = page.uid
    w.settle(page, Fate.KEPT)
    return w.close(chat)


def seo_tour(w: Writer) -> Planted:
    """A guided SEO check: one to six cards, approved, skipped or asked for another variant."""
    page, fate = w.page(f"Seite {w.rng.randint(100, 999)}")
    chat = w.open(configuration=w.seo_configuration(), skill=SEO_SKILL, page=page)
    chat.user("Bitte prüfe die SEO-Felder dieser Seite.", at=w.at)
    run = w.track(chat.run())
    run.display("chat_set_progress")
    run.llm("get_page_seo")
    run.tool("get_page_seo")
    cards = w.rng.randint(1, 6)
    for index, (field_name, label) in enumerate(w.rng.sample(SEO_TOUR_FIELDS, cards)):
        run.say(f"Ich schlage als {label} einen neuen Text vor.")
        beside = ("ask_choice",) if w.rng.random() < 0.08 else ()
        run.propose("update_page_seo", page, fields=(field_name,), beside=beside)
        if index == cards - 1 and w.rng.random() < 0.07:
            chat.end_tour(at=run.now + 600)  # the editor's ×: the card is left undecided
            w.settle(page, fate)
            return w.close(chat)
        roll = w.rng.random()
        if roll < 0.76:
            run.approve(at=run.now + w.rng.randint(10, 300), completeness=_completeness(w.rng))
        elif roll < 0.83:
            run.decline("Behalten", at=run.now + 20)
        elif roll < 0.9:
            run.decline("Überspringen", at=run.now + 20)
        elif roll < 0.97:
            run.decline("Andere Variante", at=run.now + 20)
        else:
            run.decline("abgelehnt", at=run.now + 20)
    run.display("chat_set_progress")
    if run.writes:
        run.answer("Die SEO-Felder sind gespeichert.")
    else:
        run.answer("Es wurde nichts übernommen.")
    run.finish()  # completed with chat_set_progress(completed=true): the conversation keeps its skill
    w.settle(page, fate)
    return w.close(chat)


def campaign_tour(w: Writer) -> Planted:
    """A tour of the SEO campaign: the page's SEO title, proposed on one card and approved."""
    page, fate = w.page(f"Seite {w.rng.randint(100, 999)}")
    chat = w.open(configuration=w.seo_configuration(), skill=SEO_SKILL, page=page)
    chat.user(CAMPAIGN_REQUEST, at=w.at)
    run = w.track(chat.run())
    run.llm("get_page_seo")
    run.tool("get_page_seo")
    run.propose("update_page_seo", page, fields=("seo_title",))
    run.approve(at=run.now + w.rng.randint(10, 300), completeness=_completeness(w.rng))
    run.answer("Der Seitentitel ist gespeichert.")
    run.finish()
    w.settle(page, fate)
    return w.close(chat)


def _completeness(rng: random.Random) -> str | None:
    roll = rng.random()
    return "complete" if roll < 0.78 else "partial" if roll < 0.9 else None


def content_edit(w: Writer) -> Planted:
    """An ordinary chat: the editor asks for a text change, approves the card, the run writes."""
    page, _ = w.page("Aktuelles", fate=Fate.KEPT)
    fate = w.fate()
    element = w.site.content(page, "Teaser", at=w.at - 20 * DAY, by=w.editor)
    if fate == Fate.RELEASED:
        element.hidden = True
    chat = w.open(configuration=CONTENT_CONFIGURATION, page=page)
    chat.user("Formuliere den Teaser freundlicher.", at=w.at)
    run = w.track(chat.run(privacy=Privacy.FULL if w.rng.random() < 0.1 else Privacy.METADATA))
    run.llm("get_content")
    run.tool("get_content")
    run.say("Ich schlage diesen Teaser vor: „Willkommen bei uns“.")
    run.propose("update_content", element, fields=("bodytext",))
    if w.rng.random() < 0.12:
        run.decline("Andere Variante", at=run.now + 40)
        run.answer("Hier ist eine andere Variante.")
        run.finish()
    else:
        run.approve(at=run.now + w.rng.randint(5, 900), completeness=_completeness(w.rng))
        run.answer("Erledigt: der Teaser ist aktualisiert.")
        run.finish()
    w.settle(element, fate)
    return w.close(chat)


def talk(w: Writer) -> Planted:
    """A turn that writes nothing; before the release it claims a change far more often."""
    page, _ = w.page("Team", fate=Fate.KEPT)
    chat = w.open(configuration=CONTENT_CONFIGURATION, page=page)
    chat.user("Kannst du die Überschrift auf der Teamseite ändern?", at=w.at)
    run = w.track(chat.run())
    run.llm("get_page")
    run.tool("get_page")
    if w.rng.random() < w.claim_probability():
        w.answer_claim(run)
    else:
        w.answer_plain(run, w.rng.choice(PLAIN_ANSWERS))
    run.finish()
    return w.close(chat)


def question(w: Writer) -> Planted:
    """The model asks which variant to use; the editor picks one, or writes a new message instead."""
    page, fate = w.page("Kontakt")
    chat = w.open(configuration=CONTENT_CONFIGURATION, page=page)
    chat.user("Mach die Beschreibung besser.", at=w.at)
    run = w.track(chat.run())
    run.say("Welche Tonalität soll die Beschreibung haben?")
    run.ask()
    if w.rng.random() < 0.25:
        chat.user("Egal, lass es so.", at=run.now + 300)  # the question is left undecided
        second = w.track(chat.run())
        second.answer("In Ordnung, ich lasse die Beschreibung unverändert.")
        second.finish()
    else:
        run.answer_question(at=run.now + 60)
        run.propose("update_page_seo", page, fields=("description",))
        run.approve(at=run.now + 60)
        run.answer("Die Beschreibung wurde gespeichert.")
        run.finish()
    w.settle(page, fate)
    return w.close(chat)


# After the release, the go_on conversations of one day in this many (counted back from Story.week, so that
# the same ones do whenever the installation is built) hold a "go on" that nothing answered.
GO_ON_UNANSWERED_EVERY = 3


def go_on(w: Writer) -> Planted:
    """'weiter' while an approval waits (001_…): before the fix a second run re-drafts the page; after it a
    run decided in AI Tasks is answered with a runFinishedOutside line, and such a conversation on every
    GO_ON_UNANSWERED_EVERY-th day (so that no random number is drawn) stores a "weiter" no run answered, the
    page drafted on the editor's next request: the three paths core.go_on tells apart."""
    page, fate = w.page("Neuigkeiten")
    chat = w.open(configuration=CONTENT_CONFIGURATION, page=page)
    chat.user("Lege eine Unterseite für das Sommerfest an.", at=w.at)
    run = w.track(chat.run())
    run.say("Ich schlage eine neue Seite „Sommerfest“ vor.")
    run.propose("create_page_draft", page, fields=("title",))
    if w.at < w.story.release:
        chat.user(w.rng.choice(("weiter", "alles approved", "habe alles freigegeben")), at=run.now + 400)
        again = w.track(chat.run())
        again.say("Ich schlage eine neue Seite „Sommerfest“ vor.")
        again.propose("create_page_draft", page, fields=("title",))
        again.approve(at=again.now + 60)
        again.answer("Die Seite „Sommerfest“ wurde angelegt.")
        again.finish()
    elif (w.story.week - w.at) // DAY % GO_ON_UNANSWERED_EVERY == 0:
        chat.user("weiter", at=run.now + 400)  # stored while the card waits; no run started for it
        chat.user("Lege die Seite „Sommerfest“ bitte an.", at=run.now + DAY)
        later = w.track(chat.run())
        later.propose("create_page_draft", page, fields=("title",))
        later.approve(at=later.now + 60)
        later.answer("Die Seite „Sommerfest“ wurde angelegt.")
        later.finish()
    else:
        run.approve(at=run.now + 900)  # decided in AI Tasks, outside the chat
        run.finish()
        chat.user("habe alles freigegeben", at=run.now + 30)
        chat.assistant(
            f"The run finished outside the chat and wrote {page.ref}.",
            at=run.now + 31,
            notice="runFinishedOutside",
            notice_args=page.ref,
        )
    w.settle(page, fate)
    return w.close(chat)


def failure(w: Writer) -> Planted:
    """A failed turn: a provider without a key, or a call the invocation policy refuses."""
    chat = w.open(configuration=w.rng.choice((SEO_CONFIGURATION, CONTENT_CONFIGURATION)))
    chat.user("Übersetze die Startseite.", at=w.at)
    run = w.track(chat.run())
    if w.rng.random() < 0.5:
        run.fail_before_steps()
        chat.fail("providerNotConfigured", "API key identifier is required for provider OpenAI", at=run.now)
    else:
        run.llm("translate_page")
        run.tool("translate_page", ms=2.5, error=True)  # refused by the policy: timed, a failure
        run.answer("Das Übersetzen ist für dich nicht freigegeben.")
        run.finish("failed", termination="policy_denied")
    return w.close(chat)


def follow_up(w: Writer) -> Planted:
    """Two runs write the same record a day apart: the later AI write is not a human edit."""
    page, fate = w.page("Angebote")
    chat = w.open(configuration=CONTENT_CONFIGURATION, page=page)
    chat.user("Setze einen neuen Seitentitel.", at=w.at)
    first = w.track(chat.run())
    first.propose("update_page_seo", page, fields=("seo_title",))
    first.approve(at=first.now + 30)
    first.answer("Der Seitentitel ist gespeichert.")
    first.finish()
    chat.user("Und jetzt bitte noch die Beschreibung.", at=first.now + DAY)
    second = w.track(chat.run())
    second.propose("update_page_seo", page, fields=("description",))
    second.approve(at=second.now + 30)
    second.answer("Die Beschreibung ist gespeichert.")
    second.finish()
    w.settle(page, fate)
    return w.close(chat)


def remote_write(w: Writer) -> Planted:
    """An approved remote (MCP) write: it counts as a write for the notice but names no record."""
    chat = w.open(configuration=CONTENT_CONFIGURATION)
    chat.user("Schick den Newsletter-Entwurf an das CRM.", at=w.at)
    run = w.track(chat.run())
    run.propose("crm_push_draft", None)
    run.approve(at=run.now + 50)
    run.answer("Der Entwurf wurde übertragen.")
    run.finish()
    return w.close(chat)


def stuck(w: Writer) -> Planted:
    """A conversation left in processing: the cleanup that should have failed it did not run."""
    chat = w.open(configuration=CONTENT_CONFIGURATION)
    chat.user("Prüfe alle Seiten auf fehlende Alt-Texte.", at=w.at)
    chat.stuck(w.rng.choice(("processing", "locked")), since=w.at + 5)
    planted = w.close(chat)
    planted.stuck = True
    return planted


SCENARIOS: tuple[tuple[Scenario, int], ...] = (
    (seo_tour, 22),
    (content_edit, 24),
    (talk, 26),
    (question, 9),
    (go_on, 5),
    (failure, 5),
    (follow_up, 5),
    (remote_write, 3),
    (stuck, 1),
)


def bad_rows(w: Writer) -> Planted:
    """One conversation with every kind of bad row runrecord must survive (reported, never fatal)."""
    page, _ = w.page("Import", fate=Fate.KEPT, history=False)
    chat = w.open(configuration=CONTENT_CONFIGURATION, page=page)
    chat.user("Räume die importierten Seiten auf.", at=w.at)
    run = w.track(chat.run())
    run.propose("update_record", page, fields=("title",))
    run.approve(at=run.now + 20, history=False)  # the import left no history: no_history_row
    run.propose("update_record", page, fields=("title",))
    run.approve(at=run.now + 20, raw_target="{not json")
    run.propose("update_record", page, fields=("title",))
    run.approve(
        at=run.now + 20, raw_target={"writeTargetTable": "pages; DROP TABLE pages", "writeTargetUid": 1}
    )
    run.propose("update_record", page, fields=("title",))
    run.approve(at=run.now + 20, raw_target={"writeTargetTable": "pages"})
    gone = w.site.missing_table_record("tx_news_domain_model_news", 77)
    run.propose("update_record", gone, fields=("title",))
    run.approve(at=run.now + 20)
    run.answer("Fertig.")
    run.finish()
    chat.run_record_override = "{this is not json"
    chat.card_outcomes_override = "[{broken"
    w.settle(page, Fate.KEPT)
    w.settle(gone, Fate.KEPT)
    planted = w.close(chat)
    planted.bad_rows += [
        "tool_write not JSON",
        "tool_write table not an identifier",
        "tool_write without uid",
        "run_record not JSON",
        "card_outcomes not JSON",
    ]
    return planted
