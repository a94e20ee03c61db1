"""The demo's conversation whose skill keeps a transcript of its own: the missing alt text of an image.

000_…, "Consequences": "A conversation about a missing alt text (ADR-026) replaces the transcript with its own
and gets no notes: its write is confirmed in the transcript already." The generator tells it as the last
conversation, with a random stream of its own, so that the conversations before it do not depend on it.
"""

from __future__ import annotations

from data.fates import DAY, Fate
from data.story import CONTENT_CONFIGURATION, Planted, Writer

# The skill's identifier in tx_nrmcpagent_conversation.skill_identifier; the default of
# RUNRECORD_OWN_TRANSCRIPT_SKILLS names it.
ALT_TEXT_SKILL = "missing_alt_text"
ALT_TEXT = "Das Team vor dem Büro in Leipzig"


def alt_text_story(w: Writer) -> Planted:
    """An image without an alt text: one card approved, and the skill's transcript confirms the write."""
    page, _ = w.page("Über uns", fate=Fate.KEPT)
    # The demo's record tables have no sys_file_reference: the alt text is written to the image's element.
    image = w.site.content(page, "Teamfoto", at=w.at - 20 * DAY, by=w.editor)
    chat = w.open(configuration=CONTENT_CONFIGURATION, skill=ALT_TEXT_SKILL, page=page)
    chat.user("Ergänze den fehlenden Alt-Text des Teamfotos.", at=w.at)
    run = w.track(chat.run())
    run.llm("get_content")
    run.tool("get_content")
    run.say(f"Das Teamfoto hat keinen Alt-Text. Ich schlage „{ALT_TEXT}“ vor.")
    run.propose("update_content", image, fields=("bodytext",))
    run.approve(at=run.now + 40)
    run.answer(f"Alt-Text gespeichert: „{ALT_TEXT}“ ({image.ref}).")
    run.finish()
    w.settle(image, Fate.KEPT)
    return w.close(chat)
