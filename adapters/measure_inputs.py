"""measure-rates' facts of a batch of conversations, counted in the database (DESIGN.md, "The data path").

The rules are core's (core.transcript, core.run_record_json, core.answers, core.waits, core.go_on,
core.facts); this module states them as INSERT … SELECT statements into the scratch tables
(adapters.measure_scratch), one after the other:

1. the conversations of the batch, with what their run record says whole (stored; readable);
2. their messages, read in SQL: readable, the payload's role, notice, runUuid and segment;
3. the run record's readable entries;
4. the runs the conversations name, the first run of each uuid, and the counts of their events: the one
   pass over the batch's events (the verdicts' doubt and the approval events' uids are counted there too);
5. the completed answers, and for each whether the conversation shows an earlier write;
6. the user messages a wait of their runs may hold (within the span of a waiting run's events);
7. the approval waits, only of the runs whose conversation has a "go on" or an unreadable user message
   among them (core.waits.needs_waits), and where those messages stand in them.

Only the texts a text rule judges leave the database: a completed answer's content (`answer_texts`, for
core.claims' claim and denial rules) and the text of a user message a wait may hold (`go_on_texts`, for
core.claims.is_go_on), extracted here, never whole payloads; what the rules say comes back as the uids they
said yes to (`save_judged`, `save_go_on`). Then the verdicts of the claiming runs (`fill_verdicts`: from the
counts where they settle it; the others are read by core.saved, `claiming_runs` and `save_verdicts`) and the
facts (`fill_facts`). Tool arguments and results, be_user and editor ids are never selected.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    case,
    delete,
    exists,
    func,
    insert,
    literal,
    null,
    or_,
    select,
    union,
    update,
)

from adapters import measure_scratch as scratch
from adapters import schema
from adapters.dialect import bulk, plans
from adapters.dialect import documents as doc
from adapters.dialect import json as sqljson
from core.answers import CLAIM_BY_VERDICT, AnswerState, ClaimState, DenialState
from core.error_codes import Notice
from core.events import EventKind
from core.facts import Exclusion
from core.go_on import PATHS, GoOnPath
from core.measured_runs import RUN_END_COLUMNS
from core.run_record import UNREADABLE_RECORD, Completeness, Ended, UndecidedBy, UndecidedKind
from core.run_status import FINISHED_STATUSES, RunStatus
from core.saved import Verdict
from core.table_names import MAX_TABLE_NAME
from core.transcript import Role
from core.waits import GoOnState

conversation = schema.conversation
message = schema.message
agentrun = schema.agentrun
event = schema.agentrun_event

_ROLES = tuple(role.value for role in Role)
_NOTICES = tuple(notice.value for notice in Notice)
_KINDS = tuple(kind.value for kind in EventKind)
_OPENERS = (EventKind.APPROVAL.value, EventKind.INPUT.value)


def _flag(condition: ColumnElement[bool]) -> ColumnElement[Any]:
    return case((condition, 1), else_=0)


# --- 1. the conversations and their run record ---------------------------------------------------------


# A member as the dialect reads it: (a document, the path inside it); doc.Members.at gives one.
Member = tuple[ColumnElement[Any], doc.Path]


def _count(dialect: str, member: Member, *, required: bool = False) -> ColumnElement[bool]:
    """core.run_record_json._int: an integer of at least 0; missing or null only where a default exists."""
    return doc.is_count(dialect, *member, optional=not required)


def _list_of(dialect: str, member: Member, check: doc.Item) -> ColumnElement[bool]:
    """core.run_record_json._objects: missing or null, or a list of items that pass `check`."""
    return doc.is_list_of(dialect, *member, check)


def _values(kind: type[Any]) -> tuple[str, ...]:
    return tuple(member.value for member in kind)


# The members of a run record entry that readable_entry and fill_entries read: MariaDB hands each over as a
# fragment of its own (doc.Members), read by one pass over the record.
ENTRY_MEMBERS: tuple[doc.Path, ...] = (
    ("runUuid",),
    ("segment",),
    ("position",),
    ("cardOutcomesBefore",),
    ("at",),
    ("ended",),
    ("tools",),
    ("writes",),
    ("waiting",),
    ("decision",),
    ("decision", "tool"),
    ("decision", "answer"),
    ("undecided",),
    ("undecided", "kind"),
    ("undecided", "by"),
)


def readable_entry(dialect: str, entry: doc.Members) -> ColumnElement[bool]:
    """A run record entry core.run_record_json.from_json reads (every key it knows well-formed)."""
    d = dialect

    def at(*path: str) -> Member:
        return entry.at(path)

    def tool(value: ColumnElement[Any]) -> ColumnElement[bool]:
        return (
            doc.is_kind(d, value, (), "object")
            & doc.is_kind(d, value, ("name",), "string")
            & _count(d, (value, ("calls",)))
            & _count(d, (value, ("failed",)))
        )

    def write(value: ColumnElement[Any]) -> ColumnElement[bool]:
        record = doc.exact(d, doc.raw_text(d, value, ("record",)))
        named = (record == UNREADABLE_RECORD) | doc.matches_record(d, record, MAX_TABLE_NAME)
        completeness = doc.absent_or_null(d, value, ("completeness",)) | doc.string_in(
            d, value, ("completeness",), _values(Completeness)
        )
        return (
            doc.is_kind(d, value, (), "object")
            & doc.is_kind(d, value, ("record",), "string")
            & func.coalesce(named, False)
            & completeness
        )

    def waiting(value: ColumnElement[Any]) -> ColumnElement[bool]:
        return doc.is_kind(d, value, (), "object") & doc.is_kind(d, value, ("tool",), "string")

    decided = doc.is_kind(d, *at("decision", "tool"), "string") & doc.is_kind(
        d, *at("decision", "answer"), "string"
    )
    decision = doc.by_kind(d, *at("decision"), {"object": decided, "null": True}, missing=True)
    waits = doc.string_in(d, *at("undecided", "kind"), _values(UndecidedKind)) & doc.string_in(
        d, *at("undecided", "by"), _values(UndecidedBy)
    )
    undecided = doc.by_kind(d, *at("undecided"), {"object": waits, "null": True}, missing=True)
    return and_(
        doc.is_kind(d, *at(), "object"),
        doc.is_kind(d, *at("runUuid"), "string") & doc.nonempty(d, *at("runUuid")),
        _count(d, at("segment"), required=True),
        _count(d, at("position")),
        _count(d, at("cardOutcomesBefore")),
        _count(d, at("at")),
        doc.string_in(d, *at("ended"), _values(Ended)),
        _list_of(d, at("tools"), tool),
        _list_of(d, at("writes"), write),
        _list_of(d, at("waiting"), waiting),
        decision,
        undecided,
    )


def _record_document(dialect: str, *, guarded: bool) -> Select[Any]:
    c = conversation.c
    return plans.fenced(
        dialect,
        select(
            c.uid,
            c.skill_identifier,
            c.approval_run_uuid,
            c.run_record,
            doc.document(dialect, c.run_record, guarded=guarded, of="array").label("record"),
        ),
    )


def fill_conversations(
    connection: Connection, *, after: int | None = None, upto: int | None = None, uids: Collection[int] = ()
) -> int:
    """The batch: the conversations with uid in (after, upto], or the listed ones; returns how many. A stored
    record that is no list is a problem already; one whose entries `fill_entries` cannot all read becomes
    one there."""
    d = connection.dialect.name
    c = conversation.c
    chosen = plans.in_values(d, c.uid, uids) if uids else and_(c.uid > after, c.uid <= upto)

    def run(guarded: bool) -> None:
        source = _record_document(d, guarded=guarded).where(chosen).subquery("source")
        blank = doc.blank(d, source.c.run_record)
        listed = doc.is_kind(d, source.c.record, (), "array")
        query = select(
            source.c.uid,
            func.coalesce(source.c.skill_identifier, ""),
            func.coalesce(source.c.approval_run_uuid, ""),
            _flag(~blank),
            case((blank, 0), (listed, 0), else_=1),
        )
        columns = ["uid", "skill", "approval_run_uuid", "record_stored", "record_problem"]
        connection.execute(insert(scratch.conversation).from_select(columns, query))

    sqljson.cast_first(connection, run)
    scratch.analyze(connection, scratch.conversation)
    return int(connection.execute(select(func.count()).select_from(scratch.conversation)).scalar_one())


def fill_entries(connection: Connection) -> None:
    """The readable entries of the batch's stored run records (core.run_record_json.from_json), each entry
    read once: its columns and whether every key it has is well-formed; a record with an entry that is not
    is a problem (core.run_record_json reads it, but not whole), and only its readable entries are kept."""
    d = connection.dialect.name
    s, e = scratch.conversation.c, scratch.entry.c

    def run(guarded: bool) -> None:
        lists = select(s.uid).where(s.record_stored == 1, s.record_problem == 0)
        source = _record_document(d, guarded=guarded).where(conversation.c.uid.in_(lists)).subquery("source")
        items, _, item = doc.array_items(d, source.c.record, ENTRY_MEMBERS)
        query = select(
            source.c.uid,
            doc.string(d, *item.at(("runUuid",)), scratch.NAME_LENGTH),
            func.coalesce(doc.integer(d, *item.at(("position",))), 0),
            doc.integer(d, *item.at(("segment",))),
            _flag(func.coalesce(doc.array_length(d, *item.at(("writes",))) > 0, False)),
            _flag(readable_entry(d, item)),
        ).select_from(source.join(items, literal(True)))
        columns = ["conversation", "run_uuid", "position", "segment", "writes", "readable"]
        connection.execute(insert(scratch.entry).from_select(columns, query))

    sqljson.cast_first(connection, run)
    unreadable = select(e.conversation).where(e.readable == 0)
    connection.execute(update(scratch.conversation).where(s.uid.in_(unreadable)).values(record_problem=1))
    connection.execute(delete(scratch.entry).where(e.readable == 0))
    scratch.analyze(connection, scratch.entry)


# --- 2. the messages ------------------------------------------------------------------------------------


# The members of a message payload fill_messages reads (doc.Members).
MESSAGE_MEMBERS: tuple[doc.Path, ...] = (("role",), ("notice",), ("runUuid",), ("segment",))


def fill_messages(connection: Connection) -> None:
    """The batch's messages as core.transcript.read_message reads them, without their content."""
    d = connection.dialect.name
    m = message.c

    def run(guarded: bool) -> None:
        parsed = plans.fenced(
            d,
            select(
                m.uid,
                m.conversation,
                m.sorting,
                m.role,
                m.crdate,
                doc.document(d, m.payload, guarded=guarded).label("document"),
            ).select_from(message.join(scratch.conversation, scratch.conversation.c.uid == m.conversation)),
        ).subquery("parsed")
        members, payload = doc.member_table(d, parsed.c.document, MESSAGE_MEMBERS, "member")

        def at(*path: str) -> Member:
            return payload.at(path)

        readable = doc.is_kind(d, *at(), "object") & doc.string_in(d, *at("role"), _ROLES)
        # Each member read once, whatever `readable` says (a condition on it in every column would ask the
        # engine for it again there); an unreadable message's members are cleared below.
        notice = doc.string_in(d, *at("notice"), _NOTICES)
        role = doc.raw_text(d, *at("role"))
        query = select(
            parsed.c.uid,
            parsed.c.conversation,
            parsed.c.sorting,
            parsed.c.role,
            parsed.c.crdate,
            _flag(readable),
            case((doc.exact(d, role).in_(_ROLES), role)),
            case((notice, doc.raw_text(d, *at("notice")))),
            func.coalesce(doc.string(d, *at("runUuid"), scratch.NAME_LENGTH), ""),
            doc.integer(d, *at("segment")),
        )
        if members is not None:
            query = query.select_from(parsed.outerjoin(members, literal(True)))
        columns = [
            "uid",
            "conversation",
            "sorting",
            "role_column",
            "crdate",
            "readable",
            "role",
            "notice",
            "run_uuid",
            "segment",
        ]
        connection.execute(insert(scratch.message).from_select(columns, query))

    sqljson.cast_first(connection, run)
    unread = {"role": None, "notice": None, "run_uuid": "", "segment": None}
    connection.execute(update(scratch.message).where(scratch.message.c.readable == 0).values(**unread))
    scratch.analyze(connection, scratch.message)


# --- 4. the runs named and their events ----------------------------------------------------------------


def run_end() -> ColumnElement[Any]:
    """core.measured_runs.run_end of tx_nrllm_agentrun's columns."""
    r = agentrun.c
    return case(*((r[name] > 0, r[name]) for name in RUN_END_COLUMNS), else_=0)


# The batch's events are read as one range of event uids (each event's run looked up among the batch's runs)
# where the dialect reads a key range faster (plans.reads_key_ranges) and that range holds at most this many
# events for each event of the batch's runs; otherwise run by run through the (run, sequence) index.
EVENT_SPAN = 3


def _event_span() -> Select[int, Any, Any]:
    """How many events the batch's runs have, and the range of their uids (read from the index alone)."""
    ev = event.c
    return select(func.count(), func.min(ev.uid), func.max(ev.uid)).where(
        ev.run.in_(select(scratch.run.c.uid))
    )


def _batch_events(dialect: str, query: Select[Any], span: Any) -> Select[Any]:
    """`query` (over the event table, grouped by run) for the events of the batch's runs."""
    ev, run = event.c, scratch.run.c
    if span is None:
        # The runs' uids as a list the engine sorts once: their events are then read in the index's order
        # (a join read them in the order of the run table's uuid index, each run's events elsewhere).
        return query.where(ev.run.in_(select(run.uid)))
    events, low, high = span
    if events and high - low + 1 <= EVENT_SPAN * events:
        ranged = query.join_from(event, scratch.run, run.uid == ev.run)
        return plans.in_key_range(dialect, ranged, event, ev.uid, low, high)
    probed = query.join_from(scratch.run, event, ev.run == run.uid)
    return plans.keys_first(dialect, probed, scratch.run, event, "run_sequence")


def fill_runs(connection: Connection) -> None:
    """The runs the batch names (core.answers.named_runs), the first of each uuid, and their event counts."""
    d = connection.dialect.name
    s, msg, e = scratch.conversation.c, scratch.message.c, scratch.entry.c
    named_uuids = union(
        select(msg.conversation, msg.run_uuid).where(msg.readable == 1, msg.run_uuid != ""),
        select(s.uid, s.approval_run_uuid).where(s.approval_run_uuid != ""),
        select(e.conversation, e.run_uuid).where(e.run_uuid.is_not(None)),
    )
    connection.execute(insert(scratch.name).from_select(["conversation", "uuid"], named_uuids))
    scratch.analyze(connection, scratch.name)
    # Each uuid named looked up in the run table's uuid index, one probe per name: as `uuid IN (…)`, MariaDB
    # read every run of the installation for every batch and asked each whether it was the first of its
    # uuid (measured: the whole table per batch).
    names = select(scratch.name.c.uuid).distinct().subquery("names")
    r = agentrun.c
    earlier = agentrun.alias("earlier")
    first = ~exists(select(literal(1)).where(earlier.c.uuid == r.uuid, earlier.c.uid < r.uid))
    ended = run_end()
    started = case((r.started_at != 0, r.started_at), else_=r.crdate)
    status = doc.exact(d, r.status)
    picked: list[ColumnElement[Any]] = [
        r.uid,
        r.uuid,
        r.status,
        func.coalesce(r.configuration_identifier, "").label("configuration"),
        ended.label("ended_at"),
        started.label("started_at"),
        _flag(status.in_(sorted(FINISHED_STATUSES))).label("finished"),
        _flag(status == RunStatus.WAITING_FOR_APPROVAL.value).label("waited"),
    ]
    joined, found = plans.inner_probe(d, names, agentrun, and_(r.uuid == names.c.uuid, first), picked, "run")
    if found is not agentrun:  # PostgreSQL: the probe's own columns
        picked = list(found.c)
    runs = plans.in_order(d, plans.by_index(d, select(*picked).select_from(joined), agentrun, "run_uuid"))
    columns = ["uid", "uuid", "status", "configuration", "ended_at", "started_at", "finished", "waited"]
    connection.execute(insert(scratch.run).from_select(columns, runs))
    scratch.analyze(connection, scratch.run)
    ev = event.c
    is_write = ev.kind == EventKind.TOOL_WRITE.value
    is_approval = ev.kind == EventKind.APPROVAL.value
    is_opener = ev.kind.in_(_OPENERS)
    columns = [
        "run",
        "events",
        "tool_writes",
        "approvals",
        "openers",
        "first_write_at",
        "first_write_sequence",
        "last_opener_sequence",
        "first_approval",
        "last_approval",
        "first_event_at",
        "last_event_at",
        "doubtful",
    ]
    span = connection.execute(_event_span()).one() if plans.reads_key_ranges(d) else None

    def count(guarded: bool) -> None:
        # The one pass over the batch's events: everything else measure-rates asks of them is answered from
        # these counts (the verdicts' doubt) or found through them (the approval events, by uid).
        doubtful = or_(
            ev.kind.not_in(_KINDS),
            ev.sequence.is_(None),
            ev.duration_ms.is_(None),
            ~doc.is_object(d, ev.payload, guarded=guarded),
        )
        counts = select(
            ev.run,
            func.count(),
            func.sum(_flag(is_write)),
            func.sum(_flag(is_approval)),
            func.sum(_flag(is_opener)),
            func.min(case((is_write, ev.crdate))),
            func.min(case((is_write, ev.sequence))),
            func.max(case((is_opener, ev.sequence))),
            func.min(case((is_approval, ev.uid))),
            func.max(case((is_approval, ev.uid))),
            func.min(ev.crdate),
            func.max(ev.crdate),
            func.sum(_flag(doubtful)),
        ).group_by(ev.run)
        connection.execute(insert(scratch.count).from_select(columns, _batch_events(d, counts, span)))

    sqljson.cast_first(connection, count)
    k, run = scratch.count.c, scratch.run.c
    # core.measured_runs.RunRow.waited_for_approval: an approval event, or the status.
    connection.execute(
        update(scratch.run).where(run.uid.in_(select(k.run).where(k.approvals > 0))).values(waited=1)
    )
    n = scratch.name.c
    named = select(n.conversation, run.uid).select_from(scratch.name.join(scratch.run, run.uuid == n.uuid))
    connection.execute(insert(scratch.named).from_select(["conversation", "run_uid"], named))
    scratch.analyze(connection, scratch.count, scratch.named)


# --- 5. the approval waits -----------------------------------------------------------------------------


def _earlier(probe: Any, ev: Any) -> ColumnElement[bool]:
    """The probed event comes before `ev` in its run's order (core.waits: by sequence, then uid)."""
    return and_(
        probe.run == ev.run,
        or_(probe.sequence < ev.sequence, and_(probe.sequence == ev.sequence, probe.uid < ev.uid)),
    )


def fill_waits(connection: Connection) -> None:
    """core.waits.approval_waits of the runs that waited: from the event before each approval event up to
    it, and from the last event on while the status is waiting_for_approval.

    Only for the runs of conversations with a user message whose placement counts (`_placed`; after
    `save_go_on`): every other wait changes no count (core.waits.needs_waits). The approval events are
    looked up by uid, between the first and the last of each run's (as the counts found them), not found
    among all of its events again. Each bound is then one probe of the (run, sequence) index per approval
    event or per waiting run, in the index's own order (the uid breaks ties, as it does in core.waits): no
    window over the runs' events, which would sort every event of every run that waited, twice."""
    d = connection.dialect.name
    run, k, n, u = scratch.run.c, scratch.count.c, scratch.named.c, scratch.user.c
    needed = (
        select(n.run_uid)
        .select_from(scratch.named.join(scratch.user, u.conversation == n.conversation))
        .where(_placed(u))
    )
    e = event.c
    on = and_(
        e.uid.between(k.first_approval, k.last_approval),
        e.run == k.run,
        e.kind == EventKind.APPROVAL.value,
    )
    joined, found = plans.inner_probe(
        d, scratch.count, event, on, [e.uid, e.run, e.sequence, e.crdate], "approval"
    )
    ev = found.c
    # The event before it: found in the (run, sequence) index alone (its uid is in every dialect's index
    # entry), and only that one row read for its crdate (the condition on uid is no index condition, so a
    # row read for it would be every event of the run: 13 rows per approval, measured on MariaDB).
    before_approval = event.alias("before_approval")
    before = before_approval.c
    previous_uid = (
        select(before.uid)
        .where(_earlier(before, ev))
        .order_by(before.sequence.desc(), before.uid.desc())
        .limit(1)
        .correlate_except(before_approval)
        .scalar_subquery()
    )
    previous = event.alias("previous").c
    started = select(previous.crdate).where(previous.uid == previous_uid).scalar_subquery()
    columns = ["run_uid", "started", "ended"]
    steps = (
        select(ev.run.label("run"), started.label("started"), ev.crdate.label("ended"))
        .select_from(joined)
        .where(k.approvals > 0, k.run.in_(needed))
    )
    steps = plans.in_order(d, plans.by_index(d, steps, event, "run_sequence"))
    waits = plans.fenced(d, steps).subquery("waits")
    # No event before it: no wait (core.waits pairs each approval with the event before it).
    approvals = select(waits.c.run, waits.c.started, waits.c.ended).where(waits.c.started.is_not(None))
    connection.execute(insert(scratch.wait).from_select(columns, approvals))
    last = event.alias("last_event").c
    final = (
        select(last.crdate)
        .where(last.run == run.uid)
        .order_by(last.sequence.desc(), last.uid.desc())
        .limit(1)
        .scalar_subquery()
    )
    still = select(run.uid, final, null()).where(
        run.waited == 1,
        run.uid.in_(needed),
        run.status == RunStatus.WAITING_FOR_APPROVAL.value,
        exists(select(literal(1)).where(last.run == run.uid)),
    )
    connection.execute(insert(scratch.wait).from_select(columns, still))
    scratch.analyze(connection, scratch.wait)


# --- 6. the completed answers --------------------------------------------------------------------------


def fill_answers(connection: Connection) -> None:
    """core.answers.completed_answers: per conversation and run uuid, the last assistant message naming the
    run; for a run that still exists only if it completed, and in its last segment (or without segment);
    with whether the conversation shows a write before it (core.answers.earlier_write)."""
    d = connection.dialect.name
    m, run, k = scratch.message.c, scratch.run.c, scratch.count.c
    eligible = or_(
        run.uid.is_(None),
        and_(
            doc.exact(d, run.status) == RunStatus.COMPLETED.value,
            or_(func.coalesce(k.events, 0) == 0, m.segment.is_(None), m.segment == k.openers),
        ),
    )
    ranked = (
        select(
            m.uid,
            m.conversation,
            m.run_uuid,
            run.uid.label("run_uid"),
            m.sorting,
            m.crdate,
            m.segment,
            _flag(func.coalesce(doc.exact(d, m.notice) == Notice.NOTHING_SAVED.value, False)).label("notice"),
            func.row_number()
            .over(partition_by=(m.conversation, m.run_uuid), order_by=m.sorting.desc())
            .label("rank"),
        )
        .select_from(
            scratch.message.outerjoin(scratch.run, run.uuid == m.run_uuid).outerjoin(
                scratch.count, k.run == run.uid
            )
        )
        .where(m.readable == 1, m.role == Role.ASSISTANT.value, m.run_uuid != "", eligible)
        .subquery("ranked")
    )
    a, s, e = ranked.c, scratch.conversation.c, scratch.entry.c
    own = case((a.segment.is_(None), e.position == a.sorting), else_=e.segment == a.segment)
    from_record = exists(
        select(literal(1)).where(
            e.conversation == a.conversation,
            e.writes == 1,
            e.position <= a.sorting,
            ~func.coalesce(and_(e.run_uuid == a.run_uuid, own), False),
        )
    )
    n = scratch.named.c
    same_run = and_(a.run_uid.is_not(None), n.run_uid == a.run_uid)
    from_runs = exists(
        select(literal(1))
        .select_from(scratch.named.join(scratch.count, k.run == n.run_uid))
        .where(
            n.conversation == a.conversation,
            k.first_write_at.is_not(None),
            or_(
                and_(same_run, k.first_write_sequence < k.last_opener_sequence),
                and_(~func.coalesce(same_run, False), k.first_write_at <= a.crdate),
            ),
        )
    )
    earlier = case(
        (s.record_stored == 1, case((from_record, 1), (s.record_problem == 1, null()), else_=0)),
        else_=_flag(from_runs),
    )
    query = (
        select(
            a.uid, a.conversation, a.run_uuid, a.run_uid, a.sorting, a.crdate, a.segment, a.notice, earlier
        )
        .select_from(ranked.join(scratch.conversation, s.uid == a.conversation))
        .where(a.rank == 1)
    )
    columns = [
        "message_uid",
        "conversation",
        "run_uuid",
        "run_uid",
        "position",
        "crdate",
        "segment",
        "notice",
        "earlier",
    ]
    connection.execute(insert(scratch.answer).from_select(columns, query))
    scratch.analyze(connection, scratch.answer)


def _content(dialect: str, payload: ColumnElement[Any]) -> ColumnElement[Any]:
    """core.transcript's text of a message: its content when a string, the text parts of a list, else ''."""
    return case(
        (doc.is_kind(dialect, payload, ("content",), "string"), doc.raw_text(dialect, payload, ("content",))),
        (
            doc.is_kind(dialect, payload, ("content",), "array"),
            doc.text_parts(dialect, payload, ("content",)),
        ),
        else_="",
    )


def _texts(connection: Connection, uids: Select[Any]) -> list[Any]:
    """The chosen messages' columns (the first their uid) and their text (`_content`)."""
    d = connection.dialect.name
    m = message.c
    chosen = uids.subquery("chosen")

    def run(guarded: bool) -> list[Any]:
        parsed = plans.fenced(
            d,
            select(*chosen.c, doc.document(d, m.payload, guarded=guarded).label("document")).select_from(
                chosen.join(message, m.uid == chosen.c[0])
            ),
        ).subquery("parsed")
        query = select(*(parsed.c[column.name] for column in chosen.c), _content(d, parsed.c.document))
        return [tuple(row) for row in connection.execute(query).all()]

    return sqljson.cast_first(connection, run)


def answer_texts(connection: Connection) -> list[tuple[int, int | None, str]]:
    """Every completed answer of the batch: its message uid, whether an earlier write stands before it, and
    its text (only that leaves the database)."""
    a = scratch.answer.c
    return _texts(connection, select(a.message_uid, a.earlier))


def save_judged(connection: Connection, rows: Sequence[tuple[int, bool, bool]]) -> None:
    """The answers the text rules said yes to: (message uid, claims a change, denies a change)."""
    values = [(uid, int(claims), int(denies)) for uid, claims, denies in rows if claims or denies]
    bulk.insert_rows(connection, scratch.judged, ["message_uid", "claims", "denies"], values)
    scratch.analyze(connection, scratch.judged)


# --- the verdicts of the claiming runs (core.saved) ----------------------------------------------------


def fill_verdicts(connection: Connection) -> None:
    """core.answers.verdict_from_counts for the runs whose answer claims a change, where the counts settle
    it: no events, a tool_write, or no approval — each only when every event is one core reads."""
    a, j, k = scratch.answer.c, scratch.judged.c, scratch.count.c
    verdict = case(
        (func.coalesce(k.events, 0) == 0, Verdict.CANNOT_TELL.value),
        (k.doubtful > 0, null()),
        (k.tool_writes > 0, Verdict.WROTE.value),
        (k.approvals == 0, Verdict.NOTHING_SAVED.value),
    )
    query = (
        select(a.run_uid, verdict)
        .select_from(
            scratch.answer.join(
                scratch.judged, and_(j.message_uid == a.message_uid, j.claims == 1)
            ).outerjoin(scratch.count, k.run == a.run_uid)
        )
        .where(a.run_uid.is_not(None), verdict.is_not(None))
        .distinct()
    )
    connection.execute(insert(scratch.verdict).from_select(["run_uid", "verdict"], query))


def claiming_runs(connection: Connection) -> list[int]:
    """The claiming runs whose verdict the counts do not settle: core.saved reads their events."""
    a, j, v = scratch.answer.c, scratch.judged.c, scratch.verdict.c
    query = (
        select(a.run_uid)
        .select_from(scratch.answer.join(scratch.judged, and_(j.message_uid == a.message_uid, j.claims == 1)))
        .where(a.run_uid.is_not(None), ~exists(select(literal(1)).where(v.run_uid == a.run_uid)))
    )
    return sorted({int(uid) for uid in connection.execute(query).scalars()})


def save_verdicts(connection: Connection, verdicts: dict[int, Verdict]) -> None:
    """The verdicts core.saved read from the events."""
    rows = [(uid, verdict.value) for uid, verdict in verdicts.items()]
    bulk.insert_rows(connection, scratch.verdict, ["run_uid", "verdict"], rows)
    scratch.analyze(connection, scratch.verdict)


# --- 7. the user messages sent while an approval waited ------------------------------------------------


def _waiting_runs() -> Any:
    n, run = scratch.named.c, scratch.run.c
    return scratch.named.join(scratch.run, and_(run.uid == n.run_uid, run.waited == 1))


def fill_user_messages(connection: Connection) -> None:
    """The user messages (a readable one by the payload's role, an unreadable one by the row's) that a wait
    of their conversation's runs may hold, or that a runFinishedOutside line answers: the only ones
    core.go_on counts, and the only texts `go_on_texts` hands over.

    A wait runs from an event of its run to a later one, or on from the run's last event while it waits:
    a message outside the span of every waiting run's events (core.measured_runs' counts: first and last
    event) is inside none of their waits, so the waits themselves are read only where a message the text
    rule said is a "go on" (or one that cannot be read) needs them (`fill_waits`, `place_user_messages`;
    core.waits.needs_waits)."""
    d = connection.dialect.name
    m = scratch.message.c
    following = scratch.message.alias("following")
    f = following.c
    n, run, k = scratch.named.c, scratch.run.c, scratch.count.c
    line = Notice.RUN_FINISHED_OUTSIDE.value
    next_notice = (
        select(f.notice)
        .where(f.conversation == m.conversation, f.sorting > m.sorting)
        .order_by(f.sorting)
        .limit(1)
        .scalar_subquery()
    )
    carries = func.coalesce(doc.exact(d, m.notice) == line, False) | func.coalesce(
        doc.exact(d, next_notice) == line, False
    )
    waiting_runs = _waiting_runs()
    spanned = exists(
        select(literal(1))
        .select_from(waiting_runs.join(scratch.count, k.run == run.uid))
        .where(
            n.conversation == m.conversation,
            k.first_event_at <= m.crdate,
            or_(m.crdate <= k.last_event_at, run.status == RunStatus.WAITING_FOR_APPROVAL.value),
        )
    )
    started_before = exists(
        select(literal(1))
        .select_from(waiting_runs)
        .where(n.conversation == m.conversation, run.started_at <= m.crdate)
    )
    unreadable = and_(m.readable == 0, doc.exact(d, m.role_column) == Role.USER.value)
    query = select(m.uid, m.conversation, m.sorting, m.crdate, _flag(unreadable), _flag(carries)).where(
        or_(and_(m.readable == 1, m.role == Role.USER.value), unreadable),
        or_(spanned, and_(carries, started_before)),
    )
    columns = ["message_uid", "conversation", "sorting", "crdate", "unreadable", "line"]
    connection.execute(insert(scratch.user).from_select(columns, query))
    scratch.analyze(connection, scratch.user)


def _counted_run(u: Any) -> ColumnElement[Any]:
    """core.go_on._waiting_run: the run whose wait holds the message; with a runFinishedOutside line, else
    the last run that waited and started before it."""
    return func.coalesce(u.inside_run, case((u.line == 1, u.run_before)))


def go_on_texts(connection: Connection) -> list[tuple[int, str]]:
    """The readable user messages a wait may hold or a runFinishedOutside line answers (`fill_user_messages`):
    uid and text, for core.claims.is_go_on."""
    u = scratch.user.c
    chosen = select(u.message_uid).where(u.unreadable == 0)
    return [(int(row[0]), str(row[1] or "")) for row in _texts(connection, chosen)]


def _placed(u: Any) -> ColumnElement[bool]:
    """The user messages core.go_on counts where a wait holds them: a "go on", or one that cannot be read."""
    said = exists(select(literal(1)).where(scratch.go_on.c.message_uid == u.message_uid))
    return or_(u.unreadable == 1, said)


def place_user_messages(connection: Connection) -> None:
    """For the user messages that need it (`_placed`), the waits and runs core.waits and core.go_on place them
    by: the first run (by start) whose wait holds it, the last run that waited and started at or before it,
    and the next user message's crdate."""
    d = connection.dialect.name
    u = scratch.user.c
    m = scratch.message.c
    n, run, w = scratch.named.c, scratch.run.c, scratch.wait.c
    waiting_runs = _waiting_runs()
    inside = (
        select(run.uid)
        .select_from(waiting_runs.join(scratch.wait, w.run_uid == run.uid))
        .where(
            n.conversation == u.conversation,
            w.started <= u.crdate,
            or_(w.ended.is_(None), u.crdate <= w.ended),
        )
        .order_by(run.started_at, run.uid)
        .limit(1)
        .scalar_subquery()
    )
    before = (
        select(run.uid)
        .select_from(waiting_runs)
        .where(n.conversation == u.conversation, run.started_at <= u.crdate)
        .order_by(run.started_at.desc(), run.uid.desc())
        .limit(1)
        .scalar_subquery()
    )
    next_user = (
        select(m.crdate)
        .where(
            m.conversation == u.conversation,
            m.sorting > u.sorting,
            doc.exact(d, m.role_column) == Role.USER.value,
        )
        .order_by(m.sorting)
        .limit(1)
        .scalar_subquery()
    )
    connection.execute(
        update(scratch.user)
        .where(_placed(u))
        .values(inside_run=inside, run_before=before, next_user_at=next_user)
    )


def save_go_on(connection: Connection, uids: Sequence[int]) -> None:
    """The user messages whose whole text is a "go on" phrase."""
    bulk.insert_rows(connection, scratch.go_on, ["message_uid"], [(uid,) for uid in uids])
    scratch.analyze(connection, scratch.go_on)


# --- the facts ------------------------------------------------------------------------------------------


def _problems(parts: Sequence[tuple[ColumnElement[bool], Exclusion]]) -> ColumnElement[Any]:
    """The exclusions whose condition holds, in this order, joined by commas (core.facts)."""
    joined: ColumnElement[Any] = literal("")
    for condition, reason in parts:
        joined = joined + case((condition, f",{reason.value}"), else_="")
    return func.substr(joined, 2)


def _path_counts() -> Any:
    """Per conversation and run that waited: its stored "go on" messages by path (core.go_on.PATHS) and the
    unreadable user messages in their place."""
    u = scratch.user.c
    waited = scratch.run.alias("waited")
    later = scratch.run.alias("later")
    later_named = scratch.named.alias("later_named")
    w, r, n = waited.c, later.c, later_named.c
    counted = _counted_run(u)
    # core.go_on._second_run: a run started at or after it, before the next user message, the waiting run
    # not ended then.
    second = exists(
        select(literal(1))
        .select_from(later_named.join(later, r.uid == n.run_uid))
        .where(
            n.conversation == u.conversation,
            r.uid != w.uid,
            r.started_at >= u.crdate,
            or_(u.next_user_at.is_(None), r.started_at < u.next_user_at),
            ~and_(w.finished == 1, w.ended_at <= r.started_at),
        )
    )
    is_go_on = exists(select(literal(1)).where(scratch.go_on.c.message_uid == u.message_uid))
    path = case(
        *(
            (and_(u.line == int(line), second if found else ~second), taken.value)
            for (line, found), taken in PATHS.items()
        )
    )
    rows = (
        select(u.conversation, w.uid.label("run_uid"), u.unreadable, path.label("path"))
        .select_from(scratch.user.join(waited, w.uid == counted))
        .where(or_(u.unreadable == 1, is_go_on))
        .subquery("go_on_rows")
    )
    sums = {
        taken: func.sum(_flag(and_(rows.c.unreadable == 0, rows.c.path == taken.value))).label(taken.value)
        for taken in GoOnPath
    }
    return (
        select(
            rows.c.conversation,
            rows.c.run_uid,
            *sums.values(),
            func.sum(rows.c.unreadable).label("unreadable"),
        )
        .group_by(rows.c.conversation, rows.c.run_uid)
        .subquery("paths")
    )


def _go_on_state(conversation_uid: ColumnElement[Any]) -> ColumnElement[Any]:
    """core.waits.go_on_state of a conversation: yes, else cannot tell, else no."""
    u = scratch.user.c
    inside = and_(u.conversation == conversation_uid, u.inside_run.is_not(None))
    said = exists(
        select(literal(1))
        .select_from(scratch.user.join(scratch.go_on, scratch.go_on.c.message_uid == u.message_uid))
        .where(inside)
    )
    unreadable = exists(select(literal(1)).where(inside, u.unreadable == 1))
    return case(
        (said, GoOnState.YES.value), (unreadable, GoOnState.CANNOT_TELL.value), else_=GoOnState.NO.value
    )


def _counted_at(conversation_uid: ColumnElement[Any]) -> ColumnElement[Any]:
    """The run a conversation's "go on" is counted at: the first to end of its runs that waited."""
    n, run = scratch.named.alias("counted_named"), scratch.run.alias("counted_run")
    return (
        select(run.c.uid)
        .select_from(n.join(run, and_(run.c.uid == n.c.run_uid, run.c.waited == 1)))
        .where(n.c.conversation == conversation_uid)
        .order_by(run.c.ended_at, run.c.uid)
        .limit(1)
        .scalar_subquery()
    )


FACT_COLUMNS = [column.name for column in scratch.fact.c]


def _fill_counted(connection: Connection) -> None:
    """Once per conversation, not once per run it names: the run its "go on" is counted at and its state."""
    s = scratch.conversation.c
    at = _counted_at(s.uid)
    query = select(s.uid, at, _go_on_state(s.uid)).where(at.is_not(None))
    connection.execute(insert(scratch.counted).from_select(["conversation", "run_uid", "go_on"], query))
    scratch.analyze(connection, scratch.counted)


def fill_facts(connection: Connection) -> None:
    """core.facts.conversation_facts for the batch: one per run named (the conversation with the highest
    uid that names it), one per answer whose run is gone, one per unreadable assistant message."""
    _fill_counted(connection)
    n, run, s = scratch.named.c, scratch.run.c, scratch.conversation.c
    a, j, v, k = scratch.answer.c, scratch.judged.c, scratch.verdict.c, scratch.count.c
    later = scratch.named.alias("later")
    paths = _path_counts()
    has_answer = a.message_uid.is_not(None)
    claims = func.coalesce(j.claims, 0) == 1
    from_record = _claim_from_record()
    claim = case(
        (~has_answer, ClaimState.NONE.value),
        (~claims, ClaimState.NO_CLAIM.value),
        (func.coalesce(k.events, 0) == 0, from_record),
        *((v.verdict == verdict.value, state.value) for verdict, state in CLAIM_BY_VERDICT.items()),
        else_=ClaimState.CANNOT_TELL.value,
    )
    denial = _denial(has_answer, a.earlier, j.denies)
    g = scratch.counted.c
    go_on = case((run.uid == g.run_uid, g.go_on), else_=GoOnState.NONE.value)
    cannot_tell = claim == ClaimState.CANNOT_TELL.value
    events = func.coalesce(k.events, 0)
    problems = _problems(
        [
            (and_(cannot_tell, events == 0), Exclusion.NO_EVENTS),
            (and_(cannot_tell, events > 0), Exclusion.EVENTS_UNREADABLE),
            (denial == DenialState.CANNOT_TELL.value, Exclusion.RUN_RECORD_UNREADABLE),
            (go_on == GoOnState.CANNOT_TELL.value, Exclusion.USER_MESSAGE_UNREADABLE),
        ]
    )
    p = paths.c
    runs = (
        select(
            run.uid,
            literal(0),
            n.conversation,
            run.configuration,
            s.skill,
            run.ended_at,
            literal(1),
            case((has_answer, AnswerState.READ.value), else_=AnswerState.NONE.value),
            func.coalesce(a.notice, 0),
            claim,
            denial,
            go_on,
            problems,
            *(func.coalesce(p[path.value], 0) for path in GoOnPath),
            func.coalesce(p.unreadable, 0),
        )
        .select_from(
            scratch.named.join(scratch.run, run.uid == n.run_uid)
            .join(scratch.conversation, s.uid == n.conversation)
            .outerjoin(scratch.count, k.run == run.uid)
            .outerjoin(scratch.answer, and_(a.conversation == n.conversation, a.run_uid == run.uid))
            .outerjoin(scratch.judged, j.message_uid == a.message_uid)
            .outerjoin(scratch.verdict, v.run_uid == run.uid)
            .outerjoin(paths, and_(p.conversation == n.conversation, p.run_uid == run.uid))
            .outerjoin(scratch.counted, g.conversation == n.conversation)
        )
        .where(
            ~exists(
                select(literal(1)).where(later.c.run_uid == n.run_uid, later.c.conversation > n.conversation)
            )
        )
    )
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, runs))
    gone_claim = case((claims, from_record), else_=ClaimState.NO_CLAIM.value)
    gone_denial = _denial(literal(True), a.earlier, j.denies)
    gone = (
        select(
            literal(0),
            a.message_uid,
            a.conversation,
            null(),
            s.skill,
            a.crdate,
            literal(0),
            literal(AnswerState.READ.value),
            a.notice,
            gone_claim,
            gone_denial,
            literal(GoOnState.NONE.value),
            _problems(
                [
                    (literal(True), Exclusion.RUN_MISSING),
                    (gone_claim == ClaimState.CANNOT_TELL.value, Exclusion.NO_EVENTS),
                    (gone_denial == DenialState.CANNOT_TELL.value, Exclusion.RUN_RECORD_UNREADABLE),
                ]
            ),
            *(literal(0) for _ in range(4)),
        )
        .select_from(
            scratch.answer.join(scratch.conversation, s.uid == a.conversation).outerjoin(
                scratch.judged, j.message_uid == a.message_uid
            )
        )
        .where(a.run_uid.is_(None))
    )
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, gone))
    m = scratch.message.c
    d = connection.dialect.name
    unreadable = (
        select(
            literal(0),
            m.uid,
            m.conversation,
            null(),
            s.skill,
            m.crdate,
            literal(0),
            literal(AnswerState.UNREADABLE.value),
            literal(0),
            literal(ClaimState.NONE.value),
            literal(DenialState.NONE.value),
            literal(GoOnState.NONE.value),
            literal(Exclusion.MESSAGE_UNREADABLE.value),
            *(literal(0) for _ in range(4)),
        )
        .select_from(scratch.message.join(scratch.conversation, s.uid == m.conversation))
        .where(m.readable == 0, doc.exact(d, m.role_column) == Role.ASSISTANT.value)
    )
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, unreadable))
    scratch.analyze(connection, scratch.fact)


def _claim_from_record() -> ColumnElement[Any]:
    """core.answers.verdict_from_record as a claim state, for the answer of a run without a stream: a write
    the run's stored entries list, else nothing saved by the answer's own entry of a run never continued."""
    a, s, e = scratch.answer.c, scratch.conversation.c, scratch.entry.c
    of_run = and_(e.conversation == a.conversation, e.run_uuid == a.run_uuid)
    own = case((a.segment.is_(None), e.position == a.position), else_=e.segment == a.segment)

    def listed(*where: ColumnElement[bool]) -> ColumnElement[bool]:
        return exists(select(literal(1)).where(of_run, *where))

    by_verdict = {verdict: state.value for verdict, state in CLAIM_BY_VERDICT.items()}
    return case(
        (s.record_stored == 0, by_verdict[Verdict.CANNOT_TELL]),
        (listed(e.writes == 1), by_verdict[Verdict.WROTE]),
        (s.record_problem == 1, by_verdict[Verdict.CANNOT_TELL]),
        (listed(e.segment > 0), by_verdict[Verdict.CANNOT_TELL]),
        (listed(own), by_verdict[Verdict.NOTHING_SAVED]),
        else_=by_verdict[Verdict.CANNOT_TELL],
    )


def _denial(has_answer: ColumnElement[Any], earlier: Any, denies: Any) -> ColumnElement[Any]:
    """core.answers.denial_state: counted only after an earlier write; cannot tell without the record."""
    return case(
        (~has_answer, DenialState.NONE.value),
        (earlier.is_(None), DenialState.CANNOT_TELL.value),
        (earlier == 0, DenialState.NO_EARLIER_WRITE.value),
        (func.coalesce(denies, 0) == 1, DenialState.DENIES.value),
        else_=DenialState.DOES_NOT_DENY.value,
    )


def batch_counts(connection: Connection) -> dict[str, int]:
    """What the batch read: run facts, completed answers, those without their run, unreadable assistant
    messages."""
    f, a = scratch.fact.c, scratch.answer.c
    runs = connection.execute(select(func.coalesce(func.sum(f.runs), 0))).scalar_one()
    answers = connection.execute(
        select(func.count(), func.coalesce(func.sum(_flag(a.run_uid.is_(None))), 0))
    ).one()
    unreadable = connection.execute(
        select(func.count()).where(f.answer == AnswerState.UNREADABLE.value)
    ).scalar_one()
    return {
        "runs": int(runs),
        "answers": int(answers[0]),
        "answers_without_run": int(answers[1]),
        "unreadable_messages": int(unreadable),
    }


def _unnamed_fact(condition: ColumnElement[bool], source: Any) -> Select[Any]:
    """core.facts.orphan_fact of the runs that match: counted in all and its configuration, in no skill."""
    r = agentrun.c
    return (
        select(
            r.uid,
            literal(0),
            literal(0),
            func.coalesce(r.configuration_identifier, ""),
            null(),
            run_end(),
            literal(1),
            literal(AnswerState.NONE.value),
            literal(0),
            literal(ClaimState.NONE.value),
            literal(DenialState.NONE.value),
            literal(GoOnState.NONE.value),
            literal(""),
            *(literal(0) for _ in range(4)),
        )
        .select_from(source)
        .where(condition)
    )


def fill_retired_runs(connection: Connection) -> None:
    """The runs whose stored fact is of a conversation of the batch that no longer names them: each becomes a
    run of its own (core.facts.orphan_fact) while tx_nrllm_agentrun still holds it."""
    f, sf, s = schema.measure_fact.c, scratch.fact.c, scratch.conversation.c
    given = exists(select(literal(1)).where(sf.run_uid == f.run_uid, sf.message_uid == f.message_uid))
    retired = and_(f.conversation_uid.in_(select(s.uid)), f.message_uid == 0, ~given)
    source = schema.measure_fact.join(agentrun, agentrun.c.uid == f.run_uid)
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, _unnamed_fact(retired, source)))


def fill_unnamed_runs(connection: Connection, *, run_uid: int | None, run_tstamp: int) -> int:
    """The runs no conversation's fact names (core.facts.orphan_fact); with `run_uid`, only those above it or
    updated at or after `run_tstamp`. Returns how many."""
    r, f = agentrun.c, schema.measure_fact.c
    named = exists(select(literal(1)).where(f.run_uid == r.uid, f.message_uid == 0, f.conversation_uid > 0))
    condition: ColumnElement[bool] = ~named
    if run_uid is not None:
        # The columns first: the engines ask a row's conditions in the order written, and MariaDB probed
        # the facts for every run of the installation before the few that changed (measured: 38,000).
        condition = and_(or_(r.uid > run_uid, r.tstamp >= run_tstamp), condition)
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, _unnamed_fact(condition, agentrun)))
    scratch.analyze(connection, scratch.fact)
    return int(connection.execute(select(func.count()).select_from(scratch.fact)).scalar_one())


def batch_end(connection: Connection, *, after: int, size: int) -> int | None:
    """The uid of the `size`-th conversation after `after` (or of the last one): the batch is the uid range
    (after, it]; None when no conversation follows `after`."""
    c = conversation.c
    page = select(c.uid).where(c.uid > after).order_by(c.uid).limit(size).subquery("page")
    value = connection.execute(select(func.max(page.c.uid))).scalar()
    return None if value is None else int(value)
