"""DESIGN.md rule 7 in SQL, for one batch of derive-outcomes (adapters.derive_batch): the keys of the history
rows a rule asks about, the fields each due write wrote and the window's changes named, and whether every
written field holds its old value again. Only keys are read; values are compared inside a statement, never
selected (DESIGN.md, "Privacy").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    Table,
    and_,
    case,
    func,
    insert,
    literal,
    or_,
    select,
    union,
    union_all,
)

from adapters import decision, own_rows_scratch, schema
from adapters.derive_scratch import (
    batch_asked,
    batch_changed,
    batch_countable,
    batch_draft_of,
    batch_draft_row,
    batch_field,
    batch_key_field,
    batch_key_name,
    batch_keys,
    batch_last,
    batch_modified,
    batch_ordinal,
    batch_publish,
    batch_revert,
    batch_scope,
    batch_stray,
    batch_unreadable,
    batch_unreadable_agg,
    batch_window,
    batch_window_agg,
    batch_written,
)
from adapters.dialect import bulk, plans
from adapters.dialect import json as sqljson
from adapters.dialect.exact import record_partition, same_record
from adapters.own_rows import Statistics
from core.outcomes import BOOKKEEPING_FIELDS, FIELD_ACTIONS, RELEASE_FIELD, Action
from core.window import HUMAN_ROWS

# The actions whose history_data names fields (core.outcomes.FIELD_ACTIONS), as stored in actiontype.
FIELD_ACTION_VALUES = tuple(action.value for action in FIELD_ACTIONS)
# Changes an asked write's window holds on average, from which a batch's changed fields are counted from the
# records' numbered modifies (_counts_changes): two seeks for each asked write and field of its record,
# against a pass over its windows' changes and their sort. Measured on SQLite (changes per asked write; the
# windows' rows grouped against counted): one-editor 43, 0.44 s against 0.13 s a batch; the wide shape 4,
# 0.07 s against 0.12 s for three batches; fanout 3 (more pairs to seek than rows), 0.22 s against 0.61 s.
COUNTED_CHANGES = 16


def fill_keys(connection: Connection, statistics: Statistics, *, window_s: int) -> bool:
    """The keys of the rows a rule asks about (DESIGN.md rule 7: never the values): the own add or modify row
    of each due write whose window holds a change (only then do W's fields decide anything), the modify rows
    of its record that may lie in its window, and the drafts each publish of a window moved onto the record
    (the record's draft modifies since its previous publish). Returns whether a window holds a publish."""
    dialect = connection.dialect.name
    m, a, c = own_rows_scratch.batch_match, batch_window_agg, batch_countable
    publishing = _window_publishes(connection)
    if publishing:
        _fill_drafts(connection, statistics)
    asking = m.join(a, a.c.event_uid == m.c.event_uid).join(batch_asked, _asked(m))
    # A window's modifies are its record's countable rows inserted after its write's boundary and stamped up
    # to its close: read from those rows, once each, rather than from the windows, where a hot record's
    # modify lies in a hundred windows (730,000 window rows for 28,000 modifies in a batch at one-editor's
    # 0.1; the distinct uids took 0.29 s of the statement's 0.40 s on PostgreSQL, measured). A modify of the
    # record between two windows has its keys read too, and no window asks for them.
    spans = (
        select(
            func.min(m.c.tablename).label("tablename"),
            m.c.recuid,
            func.min(m.c.boundary).label("after"),
            func.max(m.c.written_at + window_s).label("closes"),
        )
        .select_from(m.join(batch_asked, _asked(m)))
        .where(m.c.due == 1)
        .group_by(*record_partition(dialect, m))
        .subquery("spans")
    )
    in_a_span = and_(same_record(dialect, spans, c), c.c.uid > spans.c.after, c.c.tstamp <= spans.c.closes)
    wanted = union(
        select(m.c.own_uid.label("uid"))
        .select_from(asking)
        .where(m.c.due == 1, m.c.own_action.in_(FIELD_ACTION_VALUES), a.c.changes > 0),
        select(c.c.uid).select_from(spans.join(c, in_a_span)).where(c.c.actiontype == Action.MODIFY.value),
        select(batch_draft_of.c.draft_uid),
    ).subquery("wanted")
    s = schema.sys_history
    # Every row asked about gets its keys row, NULL where they cannot be read or the row is gone: no keys row
    # with NULL then says that no change of any window is unreadable (_fill_unreadable).
    joined, found = plans.outer_probe(
        dialect, wanted, s, s.c.uid == wanted.c.uid, (s.c.actiontype, s.c.history_data), "keyed"
    )

    def fill(guarded: bool) -> None:
        # Each document parsed once (PostgreSQL would cast it again for each place the keys read it).
        document = sqljson.json_document(dialect, found.c.history_data, guarded=guarded).label("document")
        parsed = select(wanted.c.uid, found.c.actiontype, document).select_from(joined)
        rows = plans.fenced(dialect, plans.in_order(dialect, parsed)).subquery("parsed")
        keys = sqljson.record_keys(dialect, rows.c.document, rows.c.actiontype)
        connection.execute(insert(batch_keys).from_select(["uid", "fields"], select(rows.c.uid, keys)))

    sqljson.cast_first(connection, fill)
    statistics(batch_keys)
    return publishing


def _asked(rows: Table) -> ColumnElement[bool]:
    """A row of `rows` (with an event_uid) is of a write in batch_asked: only their windows' keys are read."""
    return batch_asked.c.event_uid == rows.c.event_uid


def _window_publishes(connection: Connection) -> bool:
    """Whether a window of a write in batch_asked holds a publish (most batches have none: no drafts to read
    then). A window's rows are rows of batch_history: without a publish among those, the windows' rows (a
    million in a batch with hot records) are not read."""
    h, w = own_rows_scratch.batch_history, batch_window
    any_publish = select(h.c.uid).where(h.c.actiontype == Action.PUBLISH.value).limit(1)
    if connection.execute(any_publish).first() is None:
        return False
    found = select(w.c.uid).select_from(w.join(batch_asked, _asked(w)))
    found = found.where(w.c.actiontype == Action.PUBLISH.value).limit(1)
    return connection.execute(found).first() is not None


def _fill_drafts(connection: Connection, statistics: Statistics) -> None:
    """The drafts each publish of a window moved onto the record: the record's draft modifies since its
    previous publish (DESIGN.md rule 4, workspaces; a draft's add row is the copy of every field,
    core.classification._changed_keys)."""
    dialect = connection.dialect.name
    h, w = own_rows_scratch.batch_history, batch_window
    record = (h.c.tablename, h.c.recuid, h.c.uid)
    publishes = select(*record).where(h.c.live == 1, h.c.actiontype == Action.PUBLISH.value)
    connection.execute(insert(batch_publish).from_select([c.name for c in batch_publish.c], publishes))
    drafts = select(*record).where(h.c.live == 0, h.c.actiontype == Action.MODIFY.value)
    connection.execute(insert(batch_draft_row).from_select([c.name for c in batch_draft_row.c], drafts))
    d, p, m = batch_draft_row, batch_publish, own_rows_scratch.batch_match
    # A window's rows are of its write's record.
    previous = (
        select(func.max(p.c.uid)).where(same_record(dialect, m, p), p.c.uid < w.c.uid).scalar_subquery()
    )
    moved = select(w.c.event_uid, w.c.uid, d.c.uid, w.c.automation).select_from(
        w.join(batch_asked, _asked(w))
        .join(m, m.c.event_uid == w.c.event_uid)
        .join(
            d,
            and_(same_record(dialect, m, d), d.c.uid < w.c.uid, d.c.uid > func.coalesce(previous, 0)),
        )
    )
    moved = moved.where(w.c.actiontype == Action.PUBLISH.value)
    connection.execute(insert(batch_draft_of).from_select([c.name for c in batch_draft_of.c], moved))
    statistics(batch_draft_of)


def fill_scope(connection: Connection, statistics: Statistics, *, publishing: bool, window_s: int) -> None:
    """The written and changed fields of each due write (by number, batch_field), the changes whose keys
    cannot be read, their counts, and whether every written field holds its old value again (rule 7): only
    keys, exploded from the key lists batch_keys holds; values compared in SQL only."""
    dialect = connection.dialect.name
    release = _fill_key_fields(connection)
    statistics(batch_key_field)
    m, w, d, f = own_rows_scratch.batch_match, batch_window, batch_draft_of, batch_key_field
    # No DISTINCT: a write has one own row, whose keys come once each but where SQLite reads a text that
    # repeats a key; the counts below read distinct fields or ask only whether there is one.
    written = (
        select(m.c.event_uid, f.c.field_id)
        .select_from(m.join(batch_asked, _asked(m)).join(f, f.c.uid == m.c.own_uid))
        .where(m.c.due == 1)
    )
    connection.execute(insert(batch_written).from_select(["event_uid", "field_id"], written))
    # A window's changes per field and writer: a hot record's windows hold hundreds of modifies each, of the
    # same few fields.
    columns = [c.name for c in batch_changed.c]
    if _counts_changes(connection):
        _fill_modified(connection, statistics)
        modified = _counted_changes(dialect, window_s)
    else:
        modified = (
            select(w.c.event_uid, f.c.field_id, w.c.automation, func.max(w.c.uid), func.count())
            .select_from(w.join(batch_asked, _asked(w)).join(f, f.c.uid == w.c.uid))
            .where(w.c.actiontype == Action.MODIFY.value)
            .group_by(w.c.event_uid, f.c.field_id, w.c.automation)
        )
    connection.execute(insert(batch_changed).from_select(columns, modified))
    if publishing:
        published = (
            select(d.c.event_uid, f.c.field_id, d.c.automation, func.max(d.c.publish_uid), func.count())
            .select_from(d.join(f, f.c.uid == d.c.draft_uid))
            .group_by(d.c.event_uid, f.c.field_id, d.c.automation)
        )
        connection.execute(insert(batch_changed).from_select(columns, published))
    _fill_unreadable(connection, publishing=publishing)
    statistics(batch_written, batch_changed, batch_unreadable_agg)
    c, wr = batch_changed.c, batch_written.c
    human, known = c.automation == 0, wr.field_id.is_not(None)
    counts = (
        select(
            c.event_uid,
            func.count(case((human, c.field_id)).distinct()),
            func.max(case((and_(human, c.field_id == release), 1), else_=0)),
            func.count(case((and_(human, c.field_id != release, known), c.field_id)).distinct()),
            func.sum(case((c.automation == 1, c.changes), else_=0)),
            func.sum(case((and_(c.automation == 1, known), c.changes), else_=0)),
        )
        .select_from(
            batch_changed.outerjoin(
                batch_written, and_(wr.event_uid == c.event_uid, wr.field_id == c.field_id)
            )
        )
        .group_by(c.event_uid)
    )
    connection.execute(insert(batch_scope).from_select([col.name for col in batch_scope.c], counts))
    _fill_reverted(connection)


def _counts_changes(connection: Connection) -> bool:
    """Whether the batch's windows' changed fields are counted from the records' numbered modifies
    (_counted_changes) rather than grouped from the windows' rows: where the engine seeks the last row below a
    bound (plans.seeks_last_per_row), and the asked windows hold COUNTED_CHANGES changes each on average."""
    if not plans.seeks_last_per_row(connection.dialect.name):
        return False
    a = batch_window_agg
    changes, asked = connection.execute(
        select(func.coalesce(func.sum(a.c.changes), 0), func.count()).select_from(
            batch_asked.join(a, a.c.event_uid == batch_asked.c.event_uid)
        )
    ).one()
    return bool(asked) and changes >= COUNTED_CHANGES * asked


def _fill_modified(connection: Connection, statistics: Statistics) -> None:
    """batch_modified: the fields of the countable modifies whose keys were read, numbered 1, 2, … per
    record, field and writer kind in insertion order."""
    c, f = batch_countable, batch_key_field
    kind = [*record_partition(connection.dialect.name, c), f.c.field_id, c.c.automation]
    number = func.row_number().over(partition_by=kind, order_by=c.c.uid)
    rows = (
        select(c.c.tablename, c.c.recuid, f.c.field_id, c.c.automation, c.c.uid, c.c.floor, number)
        .select_from(c.join(f, f.c.uid == c.c.uid))
        .where(c.c.actiontype == Action.MODIFY.value)
    )
    connection.execute(insert(batch_modified).from_select([col.name for col in batch_modified.c], rows))
    statistics(batch_modified)


def _counted_changes(dialect: str, window_s: int) -> Select[Any]:
    """batch_changed's rows from batch_modified: each asked write's changes of a field by a writer kind, their
    last row and count, without reading its window's rows.

    A window's rows up to its close by insertion floor are the record's countable rows after its boundary
    up to the last one whose floor is at most the close: the floor never falls along the uids, and a row's
    stamp is at most its floor (DOMAIN.md, "When a row is stamped"), so each of them is stamped up to the
    close. Their changes of a field are the difference of two numbers of batch_modified, the last one up to
    the close and the last one up to the boundary (a hot record's windows share most of their modifies: the
    windows' rows grouped took 0.44 s for a batch of one-editor's 0.1, these 0.13 s, measured). The rest of
    a window are its strays past the close by floor and stamped up to it (derive_batch._window_rows), read
    row by row."""
    m, s, f = own_rows_scratch.batch_match, batch_stray, batch_key_field
    closes = m.c.written_at + window_s
    k = batch_modified.c
    kinds = select(k.tablename, k.recuid, k.field_id, k.automation).distinct().subquery("kinds")

    def last(
        picked: Callable[[Any], ColumnElement[Any]], bound: Callable[[Any], ColumnElement[bool]], *order: str
    ) -> ColumnElement[Any]:
        """What `picked` reads of the kind's last modify within `bound`, sought at the end of its range."""
        x = batch_modified.alias("bounded")
        same_kind = and_(
            same_record(dialect, kinds, x),
            x.c.field_id == kinds.c.field_id,
            x.c.automation == kinds.c.automation,
        )
        ordered = [x.c[name].desc() for name in order]
        return select(picked(x)).where(same_kind, bound(x)).order_by(*ordered).limit(1).scalar_subquery()

    up_to_close = last(plans.sqlite_rowid, lambda x: x.c.floor <= closes, "floor", "n")
    up_to_boundary = func.coalesce(last(lambda x: x.c.n, lambda x: x.c.uid <= m.c.boundary, "uid", "n"), 0)
    pairs = (
        select(
            m.c.event_uid,
            kinds.c.field_id,
            kinds.c.automation,
            up_to_close.label("top"),
            up_to_boundary.label("before"),
        )
        .select_from(m.join(batch_asked, _asked(m)).join(kinds, same_record(dialect, m, kinds)))
        .where(m.c.due == 1)
        .subquery("pairs")
    )
    top = batch_modified.alias("top")
    ranged = select(
        pairs.c.event_uid,
        pairs.c.field_id,
        pairs.c.automation,
        top.c.uid.label("last_uid"),
        (top.c.n - pairs.c.before).label("changes"),
    ).select_from(pairs.join(top, plans.sqlite_rowid(top) == pairs.c.top))
    ranged = ranged.where(top.c.n > pairs.c.before)
    span = decision.SpanColumns(uid=s.c.uid, tstamp=s.c.tstamp, own_row=m.c.boundary, closes=closes)
    in_window = and_(
        same_record(dialect, m, s),
        s.c.floor > closes,
        decision.inserted_in(HUMAN_ROWS.inserted, span),
        decision.stamped_in(HUMAN_ROWS.stamped, span),
    )
    strays = (
        select(m.c.event_uid, f.c.field_id, s.c.automation, s.c.uid, literal(1))
        .select_from(m.join(batch_asked, _asked(m)).join(s, in_window).join(f, f.c.uid == s.c.uid))
        .where(m.c.due == 1, s.c.actiontype == Action.MODIFY.value)
    )
    both = union_all(ranged, strays).subquery("changes")
    b = both.c
    return select(b.event_uid, b.field_id, b.automation, func.max(b.last_uid), func.sum(b.changes)).group_by(
        b.event_uid, b.field_id, b.automation
    )


def _fill_key_fields(connection: Connection) -> int:
    """Each key list of batch_keys exploded once, without the bookkeeping fields, and held by field number:
    the windows that share a modify (those of a hot record's writes) read its fields from here, not from its
    list again. Returns the number of RELEASE_FIELD (0: no list names it; numbers start at 1)."""
    dialect = connection.dialect.name
    ordinals = batch_ordinal if sqljson.needs_ordinals(dialect) else None
    if ordinals is not None:
        _fill_ordinals(connection)
    k, n = batch_keys, batch_key_name
    source, field = sqljson.array_elements(dialect, k, k.c.fields, ordinals)
    fields = select(k.c.uid, field).select_from(source).where(field.not_in(sorted(BOOKKEEPING_FIELDS)))
    connection.execute(insert(n).from_select(["uid", "field"], fields))
    # The distinct names numbered, then each list's names joined to their numbers: a batch's lists name a
    # few dozen fields, and numbering every name in one sort took longer than both (124,000 names at fanout's
    # 0.1: SQLite 0.27 s against 0.11, PostgreSQL 0.32 s against 0.07). Distinct and joined by the collation
    # (utf8mb4_bin on MariaDB): two names are one number only where a comparison finds them equal.
    distinct = select(n.c.field).distinct().subquery("names")
    names = select(func.row_number().over(order_by=distinct.c.field), distinct.c.field)
    connection.execute(insert(batch_field).from_select(["field_id", "field"], names))
    b = batch_field
    numbered = select(n.c.uid, b.c.field_id).select_from(n.join(b, b.c.field == n.c.field))
    connection.execute(insert(batch_key_field).from_select(["uid", "field_id"], numbered))
    release = connection.execute(select(b.c.field_id).where(b.c.field == RELEASE_FIELD)).scalar()
    return int(release or 0)


def _fill_unreadable(connection: Connection, *, publishing: bool) -> None:
    """The window's changes whose keys cannot be read: a modify's history_data, or a publish without drafts
    or with a draft whose history_data cannot be read (core.outcomes._changed_keys gives None)."""
    w, k, d = batch_window, batch_keys, batch_draft_of
    columns = ["event_uid", "uid", "automation"]
    # Every modify of an asked write's window has its keys row (fill_keys): where none is NULL, no window's
    # modify is unreadable, and the windows' rows (a million in a batch with hot records) are not read.
    if connection.execute(select(k.c.uid).where(k.c.fields.is_(None)).limit(1)).first() is not None:
        modifies = (
            select(w.c.event_uid, w.c.uid, w.c.automation)
            .select_from(w.join(batch_asked, _asked(w)).outerjoin(k, k.c.uid == w.c.uid))
            .where(w.c.actiontype == Action.MODIFY.value, k.c.fields.is_(None))
        )
        connection.execute(insert(batch_unreadable).from_select(columns, modifies))
    if publishing:
        publishes = (
            select(w.c.event_uid, w.c.uid, w.c.automation)
            .select_from(
                w.join(batch_asked, _asked(w))
                .outerjoin(d, and_(d.c.event_uid == w.c.event_uid, d.c.publish_uid == w.c.uid))
                .outerjoin(k, k.c.uid == d.c.draft_uid)
            )
            .where(w.c.actiontype == Action.PUBLISH.value)
            .group_by(w.c.event_uid, w.c.uid, w.c.automation)
            .having(or_(func.count(d.c.draft_uid) == 0, func.count(d.c.draft_uid) > func.count(k.c.fields)))
        )
        connection.execute(insert(batch_unreadable).from_select(columns, publishes))
    u = batch_unreadable.c
    human = u.automation == 0
    counts = select(
        u.event_uid,
        func.sum(case((human, 1), else_=0)),
        func.sum(case((human, 0), else_=1)),
        func.max(case((human, u.uid))),
    ).group_by(u.event_uid)
    connection.execute(
        insert(batch_unreadable_agg).from_select([c.name for c in batch_unreadable_agg.c], counts)
    )


def _fill_reverted(connection: Connection) -> None:
    """Whether each due write whose own row is a modify was reverted (core.outcomes._reverted): for every
    field it wrote, the last human change of that field in its window (or a later human change whose keys
    cannot be read) is a modify whose newRecord value equals W's own row's oldRecord value."""
    dialect = connection.dialect.name
    m, wr, c, ua = own_rows_scratch.batch_match, batch_written, batch_changed, batch_unreadable_agg
    last_named = func.max(c.c.last_uid)
    unreadable = ua.c.last_human
    latest = case(
        (unreadable.is_(None), last_named),
        (last_named.is_(None), unreadable),
        (unreadable > last_named, unreadable),
        else_=last_named,
    )
    lasts = (
        select(wr.c.event_uid, wr.c.field_id, latest)
        .select_from(
            wr.join(m, m.c.event_uid == wr.c.event_uid)
            .outerjoin(
                c, and_(c.c.event_uid == wr.c.event_uid, c.c.field_id == wr.c.field_id, c.c.automation == 0)
            )
            .outerjoin(ua, ua.c.event_uid == wr.c.event_uid)
        )
        .where(m.c.own_action == Action.MODIFY.value)
        .group_by(wr.c.event_uid, wr.c.field_id, unreadable)
    )
    connection.execute(insert(batch_last).from_select(["event_uid", "field_id", "last_uid"], lasts))
    s = schema.sys_history
    last, names = batch_last, batch_field
    field = names.c.field
    joined, later = plans.outer_probe(
        dialect,
        last.join(m, m.c.event_uid == last.c.event_uid).join(names, names.c.field_id == last.c.field_id),
        s,
        s.c.uid == last.c.last_uid,
        (s.c.actiontype, s.c.history_data),
        "later",
    )
    own = s.alias("own")
    joined, mine = plans.outer_probe(
        dialect,
        joined,
        own,
        and_(own.c.uid == m.c.own_uid, last.c.last_uid.is_not(None)),
        (own.c.history_data,),
        "own",
    )

    def fill(guarded: bool) -> None:
        new = sqljson.json_document(dialect, later.c.history_data, guarded=guarded)
        old = sqljson.json_document(dialect, mine.c.history_data, guarded=guarded)
        same = case(
            (
                and_(later.c.actiontype == Action.MODIFY.value, sqljson.is_plain_key(dialect, field)),
                case((sqljson.same_value(dialect, new, old, field), 1), else_=0),
            ),
            else_=0,
        )
        restored = func.sum(same)
        rows = (
            select(last.c.event_uid, case((restored == func.count(), 1), else_=0))
            .select_from(joined)
            .group_by(last.c.event_uid)
        )
        connection.execute(
            insert(batch_revert).from_select(["event_uid", "reverted"], plans.in_order(dialect, rows))
        )

    sqljson.cast_first(connection, fill)


def _fill_ordinals(connection: Connection) -> None:
    """Ordinals from 0 up to the longest key list of the batch (adapters.dialect.json.array_elements)."""
    longest = connection.execute(select(func.max(func.json_length(batch_keys.c.fields)))).scalar()
    have = connection.execute(select(func.count()).select_from(batch_ordinal)).scalar_one()
    wanted = int(longest or 0)
    if wanted > have:
        bulk.insert_rows(connection, batch_ordinal, ("n",), [(n,) for n in range(have, wanted)])
