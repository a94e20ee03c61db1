"""What becomes of a record after the AI wrote it, and the observed outcome that must follow.

The generator gives every record an AI run wrote one fate: the editor keeps it, edits it, releases it,
deletes it, and so on, inside or after the window. The expected outcome of each write is worked out here
from what was planted — the fate, the times of the record's history rows and the history horizon — under
DESIGN.md's rules, so that the derivation job can be checked against it. It is deliberately written from
the planted facts, not by calling the classification in core.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import accumulate

from core.outcomes import Action
from core.time import DAY_S
from data.agent_run import Write
from data.builder import Installation
from data.records import INTEGER_FIELDS, HistoryRow, Record

DAY = DAY_S
# DESIGN.md rule 3: a row whose floor (the greatest stamp inserted up to it) is at most this after a write's
# moment could have been inserted by then: the same save, stamped to the second.
SAME_SAVE_S = 2
BOOKKEEPING_FIELDS = frozenset({"tstamp", "l10n_diffsource"})  # DataHandler's, not the editor's
_SAVES = (Action.ADD, Action.MODIFY)  # the rows a save inserts: an own row is one of them

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


class RecordReading:
    """One record's planted sys_history rows read as DESIGN.md rules 3 and 4 read them: the rows left after
    trimming, in insertion order, each with its floor, and the own row the matching gives every write."""

    def __init__(
        self, record: Record, writes: Sequence[Write], *, horizon: int, cli_user: int | None
    ) -> None:
        self.record = record
        self.cli_user = cli_user
        rows = sorted((row for row in record.history if row.stamp >= horizon), key=lambda row: row.insertion)
        self.rows = rows
        self.floors = list(accumulate((row.stamp for row in rows), max))
        # A workspace's row changed the live record where a live row came before it and no publish row
        # after it (core.workspaces).
        last_publish = max(
            (i for i, row in enumerate(rows) if row.action == Action.PUBLISH and row.workspace == 0),
            default=-1,
        )
        first_live = min((i for i, row in enumerate(rows) if row.workspace == 0), default=len(rows))
        self.live = [row.workspace == 0 or first_live < i > last_publish for i, row in enumerate(rows)]
        ai = sorted((w for w in writes if w.readable), key=lambda w: (w.written_at, w.event_uid))
        self.own: dict[int, int | None] = {}  # event uid -> index of its own row, None: no own row
        self.unclear: set[int] = set()  # writes whose own row the rows cannot tell
        named = {row.names_run for row in rows if row.names_run}
        for uuid in named:
            naming = [
                i
                for i, row in enumerate(rows)
                if row.names_run == uuid and row.action in _SAVES and self.live[i]
            ]
            # From the last write backwards, each takes the latest row the later writes leave it; a write
            # left without one, where the run has rows, cannot be told.
            lane = [w for w in ai if w.run_uuid == uuid]
            left = len(naming) + 1
            for write in reversed(lane):
                left = min(len(naming), left - 1)
                self.own[write.event_uid] = naming[left - 1] if left >= 1 else None
                if left < 1 and naming:
                    self.unclear.add(write.event_uid)
        for user in dict.fromkeys(w.user for w in ai if w.run_uuid not in named):
            self._match_channel([w for w in ai if w.user == user and w.run_uuid not in named], user)
        self.ai_rows = {i for i in self.own.values() if i is not None}
        self.ai_rows |= {i for i, row in enumerate(rows) if row.names_run}

    def _match_channel(self, writes: list[Write], user: int) -> None:
        """Each write of one user takes the latest candidate row the later writes leave it (from the last)."""
        candidates = [
            i
            for i, row in enumerate(self.rows)
            if row.action in _SAVES and self.live[i] and row.user == user and not row.names_run
        ]
        could = [sum(self.floors[c] <= w.written_at + SAME_SAVE_S for c in candidates) for w in writes]
        left = len(candidates) + 1
        for i in reversed(range(len(writes))):
            left = min(could[i], left - 1)  # pos_i = min over j >= i of (p_j - (j - i))
            uid = writes[i].event_uid
            if left >= 1:
                self.own[uid] = candidates[left - 1]
            else:
                self.own[uid] = None
                if could[i] >= 1:
                    self.unclear.add(uid)

    def misread(self, write: Write) -> bool:
        """Whether the matching gives the write another row than the one it inserted."""
        index = self.own.get(write.event_uid)
        return index is not None and self.rows[index] is not write.own_row

    def boundary(self, write: Write) -> int:
        """The index the window starts after: the own row, else the last row inserted by the write."""
        index = self.own.get(write.event_uid)
        if index is not None:
            return index
        evidence = [i for i, floor in enumerate(self.floors) if floor <= write.written_at + SAME_SAVE_S]
        return evidence[-1] if evidence else -1

    def changed_keys(self, index: int) -> frozenset[str] | None:
        """The fields a modify or publish row changed (bookkeeping aside); None when they cannot be read."""
        row = self.rows[index]
        if row.action == Action.MODIFY:
            return None if row.keys is None else row.keys - BOOKKEEPING_FIELDS
        previous = max((i for i in range(index) if self.rows[i].action == Action.PUBLISH), default=-1)
        # A draft's add row copies every field of the record; the fields changed are its modifies'.
        drafts = [
            self.rows[i]
            for i in range(previous + 1, index)
            if not self.live[i] and self.rows[i].action == Action.MODIFY
        ]
        if not drafts or any(draft.keys is None for draft in drafts):
            return None
        return frozenset().union(*(draft.keys or frozenset() for draft in drafts)) - BOOKKEEPING_FIELDS


def expected_write(
    write: Write, reading: RecordReading, *, oldest_retained: int | None, window_s: int
) -> Expected:
    """The outcome DESIGN.md's rules give this write, from the rows that were planted for its record."""
    if not write.readable:
        return Expected("unknown", "unreadable_target")
    record, rows, t = reading.record, reading.rows, write.written_at
    boundary = reading.boundary(write)
    after = range(boundary + 1, len(rows))
    delete_after_window = any(
        rows[i].action == Action.DELETE and reading.live[i] and rows[i].stamp > t + window_s for i in after
    )
    if (record.gone or record.deleted) and not delete_after_window:
        return Expected("discarded")
    own = reading.own.get(write.event_uid)
    # Only the write's own row, or its writer's rows that could be it, are evidence (003_…): no older row.
    if own is None and (boundary < 0 or write.event_uid not in reading.unclear):
        trimmed = oldest_retained is None or oldest_retained > t
        return Expected("unknown", "history_trimmed" if trimmed else "no_history_row")
    if write.event_uid in reading.unclear:
        return Expected("unknown", "own_row_unclear")
    window = [i for i in after if rows[i].stamp <= t + window_s and i not in reading.ai_rows]
    if any(rows[i].action == Action.DELETE and reading.live[i] for i in window):
        return Expected("discarded")
    changes = (Action.MODIFY, Action.PUBLISH)
    automation = {i for i in window if rows[i].user == reading.cli_user}
    human = [i for i in window if reading.live[i] and i not in automation and rows[i].action in changes]
    own_keys = None if own is None or rows[own].keys is None else (rows[own].keys or frozenset())
    wrote = None if own_keys is None else own_keys - BOOKKEEPING_FIELDS
    if human:
        return Expected("edited", edit_scope=_edit_scope(reading, write, human, own, wrote))
    for i in sorted(automation):
        keys = reading.changed_keys(i) if rows[i].action in changes else frozenset()
        if rows[i].action in changes and (wrote is None or keys is None or keys & wrote):
            return Expected("unknown", "changed_by_automation")
    return Expected("accepted_unchanged")


def _edit_scope(
    reading: RecordReading, write: Write, human: list[int], own: int | None, wrote: frozenset[str] | None
) -> str:
    """DESIGN.md rule 7, from the window's human modify and publish rows."""
    keys = [reading.changed_keys(i) for i in human]
    if any(k is None for k in keys):
        return "fields_unknown"
    changed = frozenset().union(*(k or frozenset() for k in keys))
    if changed == {"hidden"}:
        return "released_only"
    if own is None or wrote is None:
        return "fields_unknown"
    rows = reading.rows
    own_row = rows[own]
    if (
        own_row.action == Action.MODIFY
        and own_row.old is not None
        and _reverted(reading, human, own_row, wrote)
    ):
        return "reverted"
    return "same_fields" if (changed & wrote) - {"hidden"} else "other_fields"


def _reverted(reading: RecordReading, human: list[int], own_row: HistoryRow, wrote: frozenset[str]) -> bool:
    """Every field the write wrote holds again, after the window's last human modify of it, its old value."""
    old = own_row.old or {}
    for name in wrote:
        last = [
            reading.rows[i]
            for i in human
            if reading.rows[i].action == Action.MODIFY and name in (reading.rows[i].new or {})
        ]
        if not last or (last[-1].new or {}).get(name) != old.get(name):
            return False
    return True


def run_outcome(outcomes: list[str]) -> str:
    """The worst outcome of a run's writes by the precedence of 003_…."""
    return min(outcomes, key=PRECEDENCE.index)
