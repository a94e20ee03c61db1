"""What becomes of a record after the AI wrote it, and the observed outcome that must follow.

The generator gives every record an AI run wrote one fate: the editor keeps it, edits it, releases it,
deletes it, and so on, inside or after the window. The expected outcome of each write is worked out here
from what was planted — the fate, the times of the record's history rows and the history horizon — under
DESIGN.md's rules, so that the derivation job can be checked against it. It is deliberately written from
the planted facts, not by calling the classification in core.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from core.time import DAY_S
from data.builder import INTEGER_FIELDS, Installation, Record
from data.chat import Write

DAY = DAY_S
EVIDENCE_SLACK_S = 2  # DESIGN.md rule 3: a row up to 2 s after the step is the write's own

# Precedence of a run's outcome, worst first (003_…, "One outcome per RUN").
PRECEDENCE = ("discarded", "edited", "unknown", "accepted_unchanged")


class Fate(StrEnum):
    KEPT = "kept"
    EDITED_SAME = "edited_same"  # an editor changes a field the AI wrote, inside the window
    EDITED_OTHER = "edited_other"  # an editor changes another field of the record, inside the window
    RELEASED = "released"  # an editor unhides the record, inside the window
    MOVED = "moved"  # an editor moves it: not a modification
    DELETED = "deleted"  # deleted=1 inside the window
    DELETED_THEN_RESTORED = "deleted_then_restored"  # deleted and undeleted inside the window
    HARD_DELETED = "hard_deleted"  # the row removed inside the window
    EDITED_AFTER_WINDOW = "edited_after_window"
    DELETED_AFTER_WINDOW = "deleted_after_window"


@dataclass(frozen=True)
class PlantedFate:
    fate: Fate
    at: int  # when the editor acted (0 for KEPT)
    fields: frozenset[str]  # the fields the editor changed


@dataclass(frozen=True)
class Expected:
    outcome: str
    reason: str = ""
    edit_scope: str = ""


def apply_fate(
    site: Installation,
    record: Record,
    fate: Fate,
    *,
    first_write_at: int,
    last_write_at: int,
    window_s: int,
    rng: random.Random,
    editor: int,
) -> PlantedFate:
    """Plant the editor's actions for a fate, inside the window of every write or after all of them."""
    room = max(first_write_at + window_s - last_write_at - 60, 120)
    inside = last_write_at + rng.randint(60, room)
    after = last_write_at + window_s + rng.randint(DAY // 2, 20 * DAY)
    if fate == Fate.KEPT:
        return PlantedFate(fate, 0, frozenset())
    if fate == Fate.EDITED_SAME:
        written = sorted(record.ai_fields)
        name = rng.choice(written) if written else "title"
        site.human_edit(record, {name: 2 if name in INTEGER_FIELDS else "von Hand"}, at=inside, by=editor)
        return PlantedFate(fate, inside, frozenset({name}))
    if fate == Fate.EDITED_OTHER:
        name = _other_field(record, record.ai_fields)
        site.human_edit(record, {name: "von Hand"}, at=inside, by=editor)
        return PlantedFate(fate, inside, frozenset({name}))
    if fate == Fate.RELEASED:
        site.set_hidden(record, False, at=inside, by=editor)
        return PlantedFate(fate, inside, frozenset({"hidden"}))
    if fate == Fate.MOVED:
        site.move(record, at=inside, by=editor)
        return PlantedFate(fate, inside, frozenset())
    if fate == Fate.DELETED:
        site.delete(record, at=inside, by=editor)
        return PlantedFate(fate, inside, frozenset())
    if fate == Fate.DELETED_THEN_RESTORED:
        site.delete(record, at=inside, by=editor)
        site.undelete(record, at=inside + 3600, by=editor)
        return PlantedFate(fate, inside, frozenset())
    if fate == Fate.HARD_DELETED:
        site.delete(record, at=inside, by=editor, hard=True)
        return PlantedFate(fate, inside, frozenset())
    if fate == Fate.EDITED_AFTER_WINDOW:
        name = _other_field(record, set())
        site.human_edit(record, {name: "später von Hand"}, at=after, by=editor)
        return PlantedFate(fate, after, frozenset({name}))
    site.delete(record, at=after, by=editor)
    return PlantedFate(Fate.DELETED_AFTER_WINDOW, after, frozenset())


def canary_edit(
    site: Installation,
    record: Record,
    *,
    first_write_at: int,
    last_write_at: int,
    window_s: int,
    within_s: int,
    rng: random.Random,
    editor: int,
) -> PlantedFate:
    """An editor changes a record the canary wrote soon after its last write: a field it wrote, mostly."""
    room = max(min(first_write_at + window_s - last_write_at - 60, within_s), 120)
    at = last_write_at + rng.randint(60, room)
    written = sorted(record.ai_fields)
    if written and rng.random() < 0.7:
        name = rng.choice(written)
        site.human_edit(record, {name: 2 if name in INTEGER_FIELDS else "von Hand"}, at=at, by=editor)
        return PlantedFate(Fate.EDITED_SAME, at, frozenset({name}))
    name = _other_field(record, record.ai_fields)
    site.human_edit(record, {name: "von Hand"}, at=at, by=editor)
    return PlantedFate(Fate.EDITED_OTHER, at, frozenset({name}))


# Text columns an editor may change, per table, in the order a field is picked.
TEXT_FIELDS = {
    "pages": ("title", "description", "seo_title", "og_title", "og_description", "twitter_title"),
    "tt_content": ("header", "bodytext"),
}


def _other_field(record: Record, written: set[str]) -> str:
    """A text field of the record that the AI did not write."""
    return next(name for name in TEXT_FIELDS[record.table] if name not in written)


def expected_write(
    write: Write, planted: PlantedFate, *, horizon: int, oldest_retained: int | None, window_s: int
) -> Expected:
    """The outcome DESIGN.md's rules give this write, from what was planted."""
    if not write.readable:
        return Expected("unknown", "unreadable_target")
    record = write.record
    t = write.written_at
    retained = [h for h in record.history_times if h >= horizon]
    deletes_after_window = [d for d in record.delete_times if d >= horizon and d > t + window_s]
    deletes_inside = [d for d in record.delete_times if t < d <= t + window_s]
    gone = record.gone or record.deleted
    if gone and not (deletes_after_window and not deletes_inside):
        return Expected("discarded")
    if not any(h <= t + EVIDENCE_SLACK_S for h in retained):
        trimmed = oldest_retained is None or oldest_retained > t
        return Expected("unknown", "history_trimmed" if trimmed else "no_history_row")
    in_window = t < planted.at <= t + window_s
    if not in_window or planted.fate in (Fate.KEPT, Fate.MOVED):
        return Expected("accepted_unchanged")
    if planted.fate in (Fate.DELETED, Fate.DELETED_THEN_RESTORED, Fate.HARD_DELETED):
        return Expected("discarded")
    if planted.fields <= {"hidden"}:
        return Expected("edited", edit_scope="released_only")
    same = bool(planted.fields & set(write.fields))
    return Expected("edited", edit_scope="same_fields" if same else "other_fields")


def run_outcome(outcomes: list[str]) -> str:
    """The worst outcome of a run's writes by the precedence of 003_…."""
    return min(outcomes, key=PRECEDENCE.index)
