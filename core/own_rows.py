"""Which sys_history rows of a record are each AI write's own, and so AI rows (DESIGN.md rule 3): by writer,
insertion order (uid) and the write's moment, never by stamp proximity alone; a row whose correlation_id names
a run is that run's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

from core.outcomes import (
    OWN_ACTIONS,
    SAME_SAVE_S,
    HistoryRow,
    Write,
)


@dataclass(frozen=True)
class OwnRow:
    """What the rows say of one write's own row: which it is, whether it cannot be told, and from which row on
    (uid order) the rows are inserted after W."""

    own: HistoryRow | None
    unclear: bool
    evidence: bool  # W's own row was found, or rows of W's writer that could be it (unclear)
    boundary: int  # rows with a greater uid are inserted after W's own row (0: every row)


def insertion_floors(rows: Sequence[HistoryRow]) -> dict[int, int]:
    """Per row uid, the latest stamp among the rows inserted up to it: it was not inserted before that.

    Every row is inserted at or after its own stamp, and rows are inserted in uid order."""
    floors: dict[int, int] = {}
    floor: int | None = None
    for row in sorted(rows, key=attrgetter("uid")):
        floor = row.tstamp if floor is None else max(floor, row.tstamp)
        floors[row.uid] = floor
    return floors


def match_own_rows(writes: Sequence[Write], rows: Sequence[HistoryRow]) -> dict[int, OwnRow]:
    """Each AI write's own row among its record's rows, by writer, insertion order and the write's moment.

    Rows whose correlation_id names a run are that run's, in order. The other writes of one writer (a lane)
    each take, from the last backwards, the latest of the writer's add or modify rows inserted by the write's
    moment that the later writes leave: the greedy pos_i = min over j >= i of (p_j - (j - i)), p_j the rows
    inserted by the j-th write's moment. A write that has such rows but none left is unclear."""
    ordered = sorted(rows, key=attrgetter("uid"))
    floors = insertion_floors(ordered)
    named_runs = {row.named_run for row in ordered if row.named_run is not None}
    lanes: dict[tuple[bool, object], list[Write]] = {}
    for write in sorted(writes, key=attrgetter("written_at", "event_uid")):
        named = write.run in named_runs
        lanes.setdefault((named, write.run if named else write.lane), []).append(write)
    matched: dict[int, OwnRow] = {}
    for (named, key), lane in lanes.items():
        if named:
            candidates = [r for r in ordered if r.named_run == key and _is_candidate(r)]
            counts = [len(candidates)] * len(lane)
        else:
            candidates = [r for r in ordered if r.named_run is None and r.channel == key and _is_candidate(r)]
            counts = [
                sum(1 for r in candidates if floors[r.uid] <= write.written_at + SAME_SAVE_S)
                for write in lane
            ]
        position = None
        for i in range(len(lane) - 1, -1, -1):
            position = counts[i] if position is None else min(counts[i], position - 1)
            own = candidates[position - 1] if position >= 1 else None
            matched[lane[i].event_uid] = _own_row(lane[i], own, counts[i], ordered, floors)
    return matched


def _is_candidate(row: HistoryRow) -> bool:
    return row.live and row.action in OWN_ACTIONS


def _own_row(
    write: Write, own: HistoryRow | None, count: int, rows: Sequence[HistoryRow], floors: Mapping[int, int]
) -> OwnRow:
    if own is not None:
        return OwnRow(own, unclear=False, evidence=True, boundary=own.uid)
    # 003_…, "The classification": another row of the record inserted by t is no proof that W's own row
    # survived ("an older survivor answers that for a write whose own row is long gone"). It still bounds the
    # rows inserted after W, which a gone record's deletes are read from (rule 2).
    inserted_by_t = [row.uid for row in rows if floors[row.uid] <= write.written_at + SAME_SAVE_S]
    last = inserted_by_t[-1] if inserted_by_t else 0
    return OwnRow(None, unclear=count >= 1, evidence=count >= 1 and last > 0, boundary=last)
