"""Conversations the record and notes tests build on a site (data.builder), each as a story of its own."""

from __future__ import annotations

from data.agent_run import Run
from data.builder import Installation
from data.chat import Conversation
from data.records import Record


def seo_title_set(site: Installation, *, at: int) -> tuple[Conversation, Run, Record]:
    """A conversation whose run sets a page's SEO title, approved and finished; not closed yet."""
    page = site.page("Produkte", at=at)
    chat = site.conversation(configuration="seo-assistant", at=at, page=page)
    chat.user("Setze den Titel.", at=at)
    run = chat.run()
    run.propose("update_page_seo", page, fields=("seo_title",))
    run.approve()
    run.answer("Gespeichert.")
    run.finish()
    return chat, run, page
