"""What became of each AI write of one record (003_…): its own row matched (core.own_rows), the rows of its
window read against core.outcomes' decision tables. The Python reference the SQL path is held to.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from core.outcomes import (
    BOOKKEEPING_FIELDS,
    CHANGE_ACTIONS,
    FIELD_ACTIONS,
    WINDOW_TESTS,
    WRITE_DECISION,
    Action,
    CallOutcome,
    HistoryRow,
    Presence,
    Write,
    WriteFacts,
    WriteOutcome,
    WriteTest,
    decide,
    unknown_outcome,
    write_test_holds,
)
from core.own_rows import OwnRow, match_own_rows
from core.window import (
    DELETES,
    DELETES_AFTER_WINDOW,
    HUMAN_ROWS,
    Span,
    in_span,
    window_closes_at,
)
from core.workspaces import live_changes


def classify_writes(
    writes: Sequence[Write],
    history: Sequence[HistoryRow],
    presence: Presence,
    oldest_retained_tstamp: int | None,
    window_s: int,
) -> dict[int, WriteOutcome]:
    """What became of each AI write of one record, from the retained history rows of that record.

    `writes` are every AI write of the record known (any run, any time): the rows each one inserted are AI
    rows for all of them (rules 2-4, 7)."""
    history = live_changes(history)
    matched = match_own_rows(writes, history)
    ordered = sorted(history, key=attrgetter("uid"))
    ai_rows = {m.own.uid for m in matched.values() if m.own is not None}
    ai_rows |= {row.uid for row in ordered if row.named_run is not None}
    return {
        write.event_uid: _classify(
            write, matched[write.event_uid], ordered, ai_rows, presence, oldest_retained_tstamp, window_s
        )
        for write in writes
    }


def classify_write(
    write: Write,
    history: Sequence[HistoryRow],
    ai_writes: Sequence[Write],
    presence: Presence,
    oldest_retained_tstamp: int | None,
    window_s: int,
) -> WriteOutcome:
    """What became of W (classify_writes with W among the record's AI writes)."""
    writes = [w for w in ai_writes if w.event_uid != write.event_uid] + [write]
    return classify_writes(writes, history, presence, oldest_retained_tstamp, window_s)[write.event_uid]


def _classify(
    write: Write,
    match: OwnRow,
    rows: Sequence[HistoryRow],
    ai_rows: set[int],
    presence: Presence,
    oldest_retained_tstamp: int | None,
    window_s: int,
) -> WriteOutcome:
    t = write.written_at
    closes = window_closes_at(t, window_s)

    def within(span: Span, row: HistoryRow) -> bool:
        return in_span(span, uid=row.uid, tstamp=row.tstamp, own_row=match.boundary, closes=closes)

    # DESIGN.md rule 4: live rows no AI write inserted; a delete is DISCARDED whoever made it, an AI run too.
    counted = [row for row in rows if row.live and (row.uid not in ai_rows or row.action is Action.DELETE)]
    window = [row for row in counted if within(HUMAN_ROWS, row)]
    deletes = [row for row in counted if row.action is Action.DELETE and within(DELETES, row)]
    # Automation's rows are no human's (DESIGN.md rule 4), but for its deletes.
    human = [row for row in window if not row.by_automation or row.action is Action.DELETE]
    automation = [row for row in window if row.by_automation and row.action in CHANGE_ACTIONS]
    human_changes = [row for row in human if row.action in CHANGE_ACTIONS]
    changed = [_changed_keys(row, rows) for row in human_changes]
    own = match.own if match.own is not None and match.own.action in FIELD_ACTIONS else None
    written = own.fields if own is not None else None
    facts = WriteFacts(
        target_readable=True,
        gone=presence is not Presence.PRESENT,
        deleted_in_window=any(within(HUMAN_ROWS, row) for row in deletes),
        deleted_after_window=any(within(DELETES_AFTER_WINDOW, row) for row in deletes),
        evidence=match.evidence,
        history_reaches_back=oldest_retained_tstamp is not None and oldest_retained_tstamp <= t,
        human_actions=frozenset(action for row in human if (action := row.action) is not None),
        own_row_unclear=match.unclear,
        automation_changed=any(_meets(_changed_keys(row, rows), written) for row in automation),
        changed_unreadable=any(keys is None for keys in changed),
        changed=frozenset().union(*(keys or () for keys in changed)) - BOOKKEEPING_FIELDS,
        written=written,
        reverted=_reverted(own, human_changes, rows),
    )
    outcome, reason, scope = decide(facts)
    if outcome is CallOutcome.UNKNOWN:
        assert reason is not None
        return unknown_outcome(write.event_uid, reason)
    gone = outcome is CallOutcome.DISCARDED and write_test_holds(WriteTest.RECORD_GONE, facts)
    if gone:
        # DESIGN.md rule 2: a record that is gone is a fact whatever the history says, evidence or not.
        deciding = tuple(row for row in deletes if within(HUMAN_ROWS, row))
    else:
        test = next(test for test, o, _ in WRITE_DECISION if write_test_holds(test, facts))
        action = next((a for a, t in WINDOW_TESTS.items() if t is test), None)
        deciding = tuple(row for row in human if row.action is action) if action is not None else ()
    # A gone record's deletes are those inserted after the last row inserted by W's moment, its own row or
    # not: that row heads what decided it, as the evidence row does for every other outcome.
    head = match.boundary if (match.evidence or gone) and match.boundary else None
    return WriteOutcome(
        event_uid=write.event_uid,
        outcome=outcome,
        reason=None,
        edit_scope=scope,
        first_change_after_s=max(0, min(row.tstamp for row in human) - t) if human else None,
        decided_by=((head,) if head is not None else ()) + tuple(row.uid for row in deciding),
    )


def _changed_keys(row: HistoryRow, rows: Sequence[HistoryRow]) -> frozenset[str] | None:
    """The fields a change row changed: a modify's newRecord keys; for a publish, the keys of the drafts it
    moved onto the record (the draft modifies since the previous publish); None when they cannot be read.

    A draft's add row is the copy TYPO3 makes of the live record at the first edit in a workspace
    (DataHandler::insertDB): it holds every field, changed or not, and its publish moves it onto the record
    too; the fields the editor changed are the draft's modifies."""
    if row.action is not Action.PUBLISH:
        return None if row.fields is None else row.fields - BOOKKEEPING_FIELDS
    drafts: list[HistoryRow] = []
    for earlier in rows:
        if earlier.uid >= row.uid:
            break
        if earlier.live and earlier.action is Action.PUBLISH:
            drafts = []
        elif not earlier.live and earlier.action is Action.MODIFY:
            drafts.append(earlier)
    if not drafts or any(draft.fields is None for draft in drafts):
        return None
    return frozenset().union(*(draft.fields or () for draft in drafts)) - BOOKKEEPING_FIELDS


def _meets(keys: frozenset[str] | None, written: frozenset[str] | None) -> bool:
    """Whether changed keys meet the fields W wrote; any change does when either cannot be read."""
    if keys is None or written is None:
        return keys is None or bool(keys)
    return bool(keys & (written - BOOKKEEPING_FIELDS))


def _reverted(own: HistoryRow | None, changes: Sequence[HistoryRow], rows: Sequence[HistoryRow]) -> bool:
    """Every field W wrote holds again the value it had before W: the last human change of each is a modify
    whose new value equals W's own row's old value (DESIGN.md rule 7, `reverted`)."""
    if own is None or own.action is not Action.MODIFY or own.fields is None:
        return False
    written = own.fields - BOOKKEEPING_FIELDS
    if not written:
        return False
    for name in written:
        last = None
        for row in changes:
            keys = _changed_keys(row, rows)
            if keys is None or name in keys:
                last = row
        if last is None or last.action is not Action.MODIFY or (own.uid, name) not in last.restores:
            return False
    return True
