"""The Python reference of derive-outcomes: every due write classified by core.outcomes.classify_write,
from inputs read without the job's SQL path (the targets parsed from each payload by core.events, the AI
write times gathered in Python), and what the job stored, side by side."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import Engine, select

from adapters import history as history_queries
from adapters import schema
from adapters.outcomes import decided_by_of
from core.events import EventProblem, WriteTarget, parse_event, write_target
from core.outcomes import (
    SAME_SAVE_S,
    Presence,
    Write,
    WriteOutcome,
    classify_write,
    run_outcome,
    unreadable_target,
)
from core.run_status import is_finished
from core.window import window_cutoff


@dataclass(frozen=True)
class Judged:
    """One write's outcome as stored or as the reference gives it."""

    outcome: str
    reason: str
    edit_scope: str
    first_change_after_s: int | None
    decided_by: tuple[int, ...]


def _judged(outcome: WriteOutcome) -> Judged:
    return Judged(
        outcome.outcome.value,
        outcome.reason.value if outcome.reason else "",
        outcome.edit_scope.value if outcome.edit_scope else "",
        outcome.first_change_after_s,
        tuple(sorted(set(outcome.decided_by))),
    )


def stored(engine: Engine) -> tuple[dict[int, Judged], dict[int, str]]:
    """What derive-outcomes stored: each write's outcome by event uid, each run's by run uid."""
    w, r = schema.write_outcome.c, schema.run_outcome.c
    with engine.connect() as connection:
        writes = {
            int(row.event_uid): Judged(
                row.outcome,
                row.reason,
                row.edit_scope,
                row.first_change_after_s,
                decided_by_of(row.decided_by) or (),
            )
            for row in connection.execute(
                select(w.event_uid, w.outcome, w.reason, w.edit_scope, w.first_change_after_s, w.decided_by)
            )
        }
        runs = {int(uid): str(outcome) for uid, outcome in connection.execute(select(r.run_uid, r.outcome))}
    return writes, runs


def reference(engine: Engine, *, now: int, window_s: int) -> tuple[dict[int, Judged], dict[int, str]]:
    """Every due write and run as core classifies them (DESIGN.md rules 1-8)."""
    e, run = schema.agentrun_event, schema.agentrun
    cutoff = window_cutoff(now, window_s)
    with engine.connect() as connection:
        events = connection.execute(
            select(e.c.uid, e.c.run, e.c.sequence, e.c.kind, e.c.round, e.c.payload, e.c.crdate)
            .where(e.c.kind == "tool_write")
            .order_by(e.c.uid)
        ).all()
        runs = {
            int(uid): (uuid, status)
            for uid, uuid, status in connection.execute(select(run.c.uid, run.c.uuid, run.c.status))
        }
        targets: dict[int, WriteTarget | None] = {}
        by_run: dict[int, list[int]] = defaultdict(list)
        written_at: dict[int, int] = {}
        ai_times: dict[tuple[str, int], list[int]] = defaultdict(list)
        for uid, run_uid, sequence, kind, round_, payload, crdate in events:
            parsed = parse_event(uid, sequence, kind, round_, 0.0, payload, crdate)
            found = None if isinstance(parsed, EventProblem) else write_target(parsed)
            targets[uid] = found if isinstance(found, WriteTarget) else None
            by_run[run_uid].append(uid)
            written_at[uid] = int(crdate)
            if isinstance(found, WriteTarget):
                ai_times[(found.table, found.uid)].append(int(crdate))
        due = [
            run_uid
            for run_uid, uids in by_run.items()
            if max(written_at[uid] for uid in uids) < cutoff
            and run_uid in runs
            and runs[run_uid][0]
            and is_finished(runs[run_uid][1])
        ]
        wanted = [uid for run_uid in due for uid in by_run[run_uid]]
        records: dict[str, set[int]] = defaultdict(set)
        for uid in wanted:
            if (target := targets[uid]) is not None:
                records[target.table].add(target.uid)
        times = [written_at[uid] for uid in wanted] or [0]
        history = history_queries.history_rows(
            connection, records, keys_from=min(times) - SAME_SAVE_S, keys_to=max(times) + window_s
        )
        catalog = history_queries.TableCatalog(connection)
        presence: dict[tuple[str, int], Presence] = {}
        no_records: set[str] = set()
        for name, uids in records.items():
            table = catalog.get(name)
            if table is None:
                presence.update({(name, uid): Presence.TABLE_MISSING for uid in uids})
            elif not table.has_uid:
                no_records.add(name)
            else:
                present = history_queries.presence(connection, table, uids)
                presence.update({(name, uid): state for uid, state in present.items()})
        oldest = history_queries.oldest_retained_tstamp(connection)

    def classify(uid: int) -> WriteOutcome:
        target = targets[uid]
        if target is None or target.table in no_records:
            return unreadable_target(uid)
        key = (target.table, target.uid)
        write = Write(uid, target.table, target.uid, written_at[uid])
        return classify_write(write, history.get(key, ()), ai_times[key], presence[key], oldest, window_s)

    write_outcomes: dict[int, Judged] = {}
    run_outcomes: dict[int, str] = {}
    for run_uid in due:
        classified = [classify(uid) for uid in by_run[run_uid]]
        write_outcomes.update({outcome.event_uid: _judged(outcome) for outcome in classified})
        run_outcomes[run_uid] = run_outcome(outcome.outcome for outcome in classified).value
    return write_outcomes, run_outcomes
