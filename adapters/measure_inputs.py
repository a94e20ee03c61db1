"""measure-rates' facts of a batch of conversations, counted in the database (DESIGN.md, "The data path").

The rules are core's (core.transcript, core.run_record_json, core.answers, core.waits, core.go_on,
core.facts); this module states them as INSERT … SELECT statements into the scratch tables
(adapters.measure_scratch), one after the other:

1. the conversations of the batch, with what their run record says whole (stored; readable);
2. their messages, read in SQL: readable, the payload's role, notice, runUuid and segment;
3. the run record's readable entries;
4. the runs the conversations name, the first run of each uuid, and the counts of their events;
5. the approval waits of the runs that waited;
6. the completed answers, and for each whether the conversation shows an earlier write;
7. the user messages that may be a "go on" sent while an approval waited.

Only the texts a text rule judges leave the database: a completed answer's content (`answer_texts`, for
core.claims' claim and denial rules) and the text of a user message sent while an approval waited
(`go_on_texts`, for core.claims.is_go_on), extracted here, never whole payloads; what the rules say comes
back as the uids they said yes to (`save_judged`, `save_go_on`). Then the verdicts of the claiming runs
(`fill_verdicts`: from the counts where they settle it; the others are read by core.saved, `claiming_runs`
and `save_verdicts`) and the facts (`fill_facts`). Tool arguments and results, be_user and editor ids are
never selected.
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


def _count(
    dialect: str, item: ColumnElement[Any], key: str, *, required: bool = False
) -> ColumnElement[bool]:
    """core.run_record_json._int: an integer of at least 0; missing or null only where a default exists."""
    number = doc.is_kind(dialect, item, (key,), "integer") & (doc.integer(dialect, item, (key,)) >= 0)
    return number if required else doc.absent_or_null(dialect, item, (key,)) | number


def _list_of(dialect: str, item: ColumnElement[Any], key: str, check: doc.Item) -> ColumnElement[bool]:
    """core.run_record_json._objects: missing or null, or a list of items that pass `check`."""
    listed = doc.is_kind(dialect, item, (key,), "array") & doc.every_item(dialect, item, (key,), check)
    return doc.absent_or_null(dialect, item, (key,)) | listed


def _name_of(dialect: str, item: ColumnElement[Any], key: str) -> ColumnElement[bool]:
    return doc.is_kind(dialect, item, (key,), "string")


def _values(kind: type[Any]) -> tuple[str, ...]:
    return tuple(member.value for member in kind)


def readable_entry(dialect: str, item: ColumnElement[Any]) -> ColumnElement[bool]:
    """A run record entry core.run_record_json.from_json reads (every key it knows well-formed)."""
    d = dialect

    def tool(value: ColumnElement[Any]) -> ColumnElement[bool]:
        return (
            doc.is_kind(d, value, (), "object")
            & _name_of(d, value, "name")
            & _count(d, value, "calls")
            & _count(d, value, "failed")
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
        return doc.is_kind(d, value, (), "object") & _name_of(d, value, "tool")

    decision = doc.absent_or_null(d, item, ("decision",)) | (
        doc.is_kind(d, item, ("decision",), "object")
        & doc.is_kind(d, item, ("decision", "tool"), "string")
        & doc.is_kind(d, item, ("decision", "answer"), "string")
    )
    undecided = doc.absent_or_null(d, item, ("undecided",)) | (
        doc.is_kind(d, item, ("undecided",), "object")
        & doc.string_in(d, item, ("undecided", "kind"), _values(UndecidedKind))
        & doc.string_in(d, item, ("undecided", "by"), _values(UndecidedBy))
    )
    return and_(
        doc.is_kind(d, item, (), "object"),
        doc.is_kind(d, item, ("runUuid",), "string") & doc.nonempty(d, item, ("runUuid",)),
        _count(d, item, "segment", required=True),
        _count(d, item, "position"),
        _count(d, item, "cardOutcomesBefore"),
        _count(d, item, "at"),
        doc.string_in(d, item, ("ended",), _values(Ended)),
        _list_of(d, item, "tools", tool),
        _list_of(d, item, "writes", write),
        _list_of(d, item, "waiting", waiting),
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
        items, _, item = doc.array_items(d, source.c.record)
        query = select(
            source.c.uid,
            doc.string(d, item, ("runUuid",), scratch.NAME_LENGTH),
            func.coalesce(doc.integer(d, item, ("position",)), 0),
            doc.integer(d, item, ("segment",)),
            _flag(func.coalesce(doc.array_length(d, item, ("writes",)) > 0, False)),
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
        payload = parsed.c.document
        readable = doc.is_kind(d, payload, (), "object") & doc.string_in(d, payload, ("role",), _ROLES)
        # Each member read once, whatever `readable` says (a condition on it in every column would ask the
        # engine for it again there); an unreadable message's members are cleared below.
        notice = doc.string_in(d, payload, ("notice",), _NOTICES)
        role = doc.raw_text(d, payload, ("role",))
        query = select(
            parsed.c.uid,
            parsed.c.conversation,
            parsed.c.sorting,
            parsed.c.role,
            parsed.c.crdate,
            _flag(readable),
            case((doc.exact(d, role).in_(_ROLES), role)),
            case((notice, doc.raw_text(d, payload, ("notice",)))),
            func.coalesce(doc.string(d, payload, ("runUuid",), scratch.NAME_LENGTH), ""),
            doc.integer(d, payload, ("segment",)),
        )
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


def fill_runs(connection: Connection) -> None:
    """The runs the batch names (core.answers.named_runs), the first of each uuid, and their event counts."""
    d = connection.dialect.name
    s, msg, e = scratch.conversation.c, scratch.message.c, scratch.entry.c
    names = union(
        select(msg.conversation, msg.run_uuid).where(msg.readable == 1, msg.run_uuid != ""),
        select(s.uid, s.approval_run_uuid).where(s.approval_run_uuid != ""),
        select(e.conversation, e.run_uuid).where(e.run_uuid.is_not(None)),
    )
    connection.execute(insert(scratch.name).from_select(["conversation", "uuid"], names))
    scratch.analyze(connection, scratch.name)
    r = agentrun.c
    earlier = agentrun.alias("earlier")
    first = ~exists(select(literal(1)).where(earlier.c.uuid == r.uuid, earlier.c.uid < r.uid))
    ended = run_end()
    started = case((r.started_at != 0, r.started_at), else_=r.crdate)
    status = doc.exact(d, r.status)
    runs = select(
        r.uid,
        r.uuid,
        r.status,
        func.coalesce(r.configuration_identifier, ""),
        ended,
        started,
        _flag(status.in_(sorted(FINISHED_STATUSES))),
        _flag(status == RunStatus.WAITING_FOR_APPROVAL.value),
    ).where(r.uuid.in_(select(scratch.name.c.uuid)), first)
    columns = ["uid", "uuid", "status", "configuration", "ended_at", "started_at", "finished", "waited"]
    connection.execute(insert(scratch.run).from_select(columns, runs))
    scratch.analyze(connection, scratch.run)
    ev = event.c
    is_write = ev.kind == EventKind.TOOL_WRITE.value
    is_opener = ev.kind.in_(_OPENERS)
    counts = (
        select(
            ev.run,
            func.count(),
            func.sum(_flag(is_write)),
            func.sum(_flag(ev.kind == EventKind.APPROVAL.value)),
            func.sum(_flag(is_opener)),
            func.min(case((is_write, ev.crdate))),
            func.min(case((is_write, ev.sequence))),
            func.max(case((is_opener, ev.sequence))),
        )
        # The runs' uids as a list the engine sorts once: their events are then read in the index's order
        # (a join read them in the order of the run table's uuid index, each run's events elsewhere).
        .where(ev.run.in_(select(scratch.run.c.uid)))
        .group_by(ev.run)
    )
    columns = [
        "run",
        "events",
        "tool_writes",
        "approvals",
        "openers",
        "first_write_at",
        "first_write_sequence",
        "last_opener_sequence",
    ]
    connection.execute(insert(scratch.count).from_select(columns, counts))
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

    Each bound is one probe of the (run, sequence) index per approval event or per waiting run, in the
    index's own order (the uid breaks ties, as it does in core.waits): no window over the runs' events,
    which would sort every event of every run that waited, twice."""
    ev, run = event.c, scratch.run.c
    before = event.alias("before_approval").c
    previous = (
        select(before.crdate)
        .where(_earlier(before, ev))
        .order_by(before.sequence.desc(), before.uid.desc())
        .limit(1)
        .scalar_subquery()
    )
    any_before = event.alias("any_before").c
    columns = ["run_uid", "started", "ended"]
    approvals = select(ev.run, previous, ev.crdate).where(
        ev.run.in_(select(run.uid).where(run.waited == 1)),
        ev.kind == EventKind.APPROVAL.value,
        exists(select(literal(1)).where(_earlier(any_before, ev))),
    )
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
    d = connection.dialect.name
    a, j, k, t = scratch.answer.c, scratch.judged.c, scratch.count.c, scratch.doubt.c
    ev = event.c
    claiming = select(a.run_uid).select_from(
        scratch.answer.join(scratch.judged, and_(j.message_uid == a.message_uid, j.claims == 1))
    )

    def run(guarded: bool) -> None:
        doubtful = or_(
            ev.kind.not_in(_KINDS),
            ev.sequence.is_(None),
            ev.duration_ms.is_(None),
            sqljson.is_json_object(d, ev.payload, guarded=guarded) == 0,
        )
        # One pass over the claiming runs' events, in the index's order, each payload checked once.
        counted = (
            select(ev.run, func.sum(_flag(doubtful)))
            .where(ev.run.in_(claiming.where(a.run_uid.is_not(None))))
            .group_by(ev.run)
        )
        connection.execute(insert(scratch.doubt).from_select(["run", "doubtful"], counted))

    sqljson.cast_first(connection, run)
    scratch.analyze(connection, scratch.doubt)
    verdict = case(
        (func.coalesce(k.events, 0) == 0, Verdict.CANNOT_TELL.value),
        (func.coalesce(t.doubtful, 0) > 0, null()),
        (k.tool_writes > 0, Verdict.WROTE.value),
        (k.approvals == 0, Verdict.NOTHING_SAVED.value),
    )
    query = (
        select(a.run_uid, verdict)
        .select_from(
            scratch.answer.join(scratch.judged, and_(j.message_uid == a.message_uid, j.claims == 1))
            .outerjoin(scratch.count, k.run == a.run_uid)
            .outerjoin(scratch.doubt, t.run == a.run_uid)
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


def fill_user_messages(connection: Connection) -> None:
    """The user messages of conversations with a run that waited (a readable one by the payload's role, an
    unreadable one by the row's), with the waits and runs core.waits and core.go_on place them by."""
    d = connection.dialect.name
    m = scratch.message.c
    following = scratch.message.alias("following")
    f = following.c
    n, run, w = scratch.named.c, scratch.run.c, scratch.wait.c
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
    waiting_runs = scratch.named.join(scratch.run, and_(run.uid == n.run_uid, run.waited == 1))
    inside = (
        select(run.uid)
        .select_from(waiting_runs.join(scratch.wait, w.run_uid == run.uid))
        .where(
            n.conversation == m.conversation,
            w.started <= m.crdate,
            or_(w.ended.is_(None), m.crdate <= w.ended),
        )
        .order_by(run.started_at, run.uid)
        .limit(1)
        .scalar_subquery()
    )
    before = (
        select(run.uid)
        .select_from(waiting_runs)
        .where(n.conversation == m.conversation, run.started_at <= m.crdate)
        .order_by(run.started_at.desc(), run.uid.desc())
        .limit(1)
        .scalar_subquery()
    )
    next_user = (
        select(f.crdate)
        .where(
            f.conversation == m.conversation,
            f.sorting > m.sorting,
            doc.exact(d, f.role_column) == Role.USER.value,
        )
        .order_by(f.sorting)
        .limit(1)
        .scalar_subquery()
    )
    unreadable = and_(m.readable == 0, doc.exact(d, m.role_column) == Role.USER.value)
    query = select(
        m.uid, m.conversation, m.crdate, _flag(unreadable), _flag(carries), inside, before, next_user
    ).where(
        or_(and_(m.readable == 1, m.role == Role.USER.value), unreadable),
        exists(select(literal(1)).select_from(waiting_runs).where(n.conversation == m.conversation)),
    )
    columns = [
        "message_uid",
        "conversation",
        "crdate",
        "unreadable",
        "line",
        "inside_run",
        "run_before",
        "next_user_at",
    ]
    connection.execute(insert(scratch.user).from_select(columns, query))
    scratch.analyze(connection, scratch.user)


def _counted_run(u: Any) -> ColumnElement[Any]:
    """core.go_on._waiting_run: the run whose wait holds the message; with a runFinishedOutside line, else
    the last run that waited and started before it."""
    return func.coalesce(u.inside_run, case((u.line == 1, u.run_before)))


def go_on_texts(connection: Connection) -> list[tuple[int, str]]:
    """The readable user messages sent while an approval waited (inside a run's wait, or answered by a
    runFinishedOutside line): uid and text, for core.claims.is_go_on."""
    u = scratch.user.c
    chosen = select(u.message_uid).where(u.unreadable == 0, _counted_run(u).is_not(None))
    return [(int(row[0]), str(row[1] or "")) for row in _texts(connection, chosen)]


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
    claim = case(
        (~has_answer, ClaimState.NONE.value),
        (~claims, ClaimState.NO_CLAIM.value),
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
    gone_claim = case((claims, ClaimState.CANNOT_TELL.value), else_=ClaimState.NO_CLAIM.value)
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
                    (claims, Exclusion.NO_EVENTS),
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
        condition = and_(condition, or_(r.uid > run_uid, r.tstamp >= run_tstamp))
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
