"""The conversations of the demo installation, each a small story told with the builder.

`Story` holds the installation-wide dates (the release, when the chat began storing notices and run
records, the history horizon); each scenario writes one conversation and returns what it planted.
Conversation 1 is the story of 000_6007b8db2f9b43d2.txt.
"""

from __future__ import annotations

import random

from data.agent_run import Run
from data.fates import DAY, Fate
from data.payloads import Privacy
from data.records import Record
from data.story import (
    CAMPAIGN_REQUEST,
    CONTENT_CONFIGURATION,
    DENIAL,
    FOLLOW_UP_REWRITE_SHARE,
    LATER_ROUND_MS,
    LATER_ROUND_SHARE,
    PLAIN_ANSWERS,
    SEO_CONFIGURATION,
    SEO_SKILL,
    SEO_TOUR_FIELDS,
    Planted,
    Scenario,
    Writer,
)


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
            written = run.approve(at=run.now + w.rng.randint(10, 300), completeness=_completeness(w.rng))
            if written is not None and index < cards - 1:
                w.hand_edit_between_writes(page, written)
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
        if w.plan is not None and w.plan.chance(LATER_ROUND_SHARE):
            _later_round_write(w, run, element)
        run.answer("Erledigt: der Teaser ist aktualisiert.")
        run.finish()
    w.settle(element, fate)
    return w.close(chat)


def _later_round_write(w: Writer, run: Run, element: Record) -> None:
    """The run thinks on for two model rounds after the approved write and shortens the text it wrote, in the
    same segment: a write a minute or two after its process started."""
    assert w.plan is not None and w.planted is not None
    run.llm("chat_set_progress", ms=w.plan.plants.uniform(*LATER_ROUND_MS))
    run.tool("chat_set_progress", ms=4.0)  # a display call: the chat's record leaves it out
    run.llm("update_content", ms=w.plan.plants.uniform(*LATER_ROUND_MS))
    run.write(element, {"bodytext": "neu: bodytext, kürzer"}, tool="update_content")
    w.planted.cases["write_in_a_later_round"] += 1


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
    """A failed turn (a provider without a key), or a call the invocation policy refuses: nr-llm hands the
    refusal to the model as the call's error and the run goes on to complete with its answer."""
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
        run.finish()
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
    if w.plan is not None and w.planted is not None and w.plan.chance(FOLLOW_UP_REWRITE_SHARE):
        # The second run rewrites the first run's title as well: an AI write, not a human edit of it.
        second.propose("update_page_seo", page, fields=("seo_title", "description"))
        changes = {"seo_title": "neu: seo_title, zweite Fassung", "description": "neu: description"}
        second.approve(at=second.now + 30, changes=changes)
        w.planted.cases["second_run_rewrite"] += 1
    else:
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
