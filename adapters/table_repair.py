"""Our tables dropped by hand while the revision of our tables says they exist (init-db): each created again,
and what the others keep made to agree with it, losing no outcome that is still there.

* derive-outcomes' reading of the events (the write targets, the pending and unfinished runs, the highest
  event read): emptied together, so that its next run reads every tool_write event again. A run with an
  outcome stays derived.
* The survival counts: counted again from the write outcomes, as migration 0010 first counted them.
* The outcomes: final once derived (ADR-185, "derived once, after a window"). Lost, they can only be derived
  again from sys_history as it stands now, so init-db does that only when asked (`derive_again`), and then
  every finished run is derived again, everything counted from them emptied with them.
* measure-rates' facts, rates and marks: its next run counts every conversation and period again (the
  marks emptied), as after lost outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, Table, and_, delete, inspect, select

from adapters import schema, survival
from adapters.errors import RunrecordError

EVENT_READING = (schema.write_target, schema.pending_run, schema.unfinished_run, schema.scan_mark)
SURVIVAL = (schema.survival_tally, schema.survival_group)
OUTCOMES = (schema.run_outcome, schema.write_outcome)
MEASURED = (schema.measure_fact, schema.rate, schema.measure_mark)

# A run derived before its window was stored with it (migration 0010's reading of such a row).
UNSTORED_WINDOW_S = 7 * 86_400


@dataclass(frozen=True)
class Repair:
    """The tables created again, and what was done for the rest to agree with them."""

    recreated: tuple[str, ...] = ()
    events_read_again: bool = False  # derive-outcomes' next run reads every tool_write event again
    survival_counted_again: bool = False
    derived_again: bool = False  # derive-outcomes' next run derives every finished run again
    measured_again: bool = False  # measure-rates' next run counts everything again


def repair(connection: Connection, *, revision: str | None, derive_again: bool) -> Repair:
    """Create again our tables the database lacks; refuse to lose outcomes unless `derive_again`."""
    existing = set(inspect(connection).get_table_names())
    missing = [table for table in schema.ours.sorted_tables if table.name not in existing]
    if not missing:
        if not _survival_lost(connection):
            return Repair()
        # A repair stopped after its CREATE, which commits on MariaDB, and before it had counted them again.
        for table in SURVIVAL:
            connection.execute(delete(table))
        _count_survival(connection)
        return Repair(survival_counted_again=True)
    lost_outcomes = [table.name for table in missing if table in OUTCOMES]
    if lost_outcomes and not derive_again:
        raise RunrecordError(
            f"our {tables_missing(lost_outcomes)} although our tables are at revision {revision}: the "
            "outcomes there were final, and derived again they would be read from sys_history as it is now "
            "(a run whose rows are gone comes out unknown); restore from a backup, or run "
            "`runrecord init-db --derive-again` to derive every finished run again"
        )
    lost = set(missing)
    derived_again = bool(lost_outcomes)
    events_read_again = derived_again or bool(lost & set(EVENT_READING))
    survival_counted_again = not derived_again and bool(lost & set(SURVIVAL))
    measured_again = derived_again or bool(lost & set(MEASURED))
    emptied: list[Table] = []
    if derived_again:
        emptied.extend((*OUTCOMES, *SURVIVAL))
    if events_read_again:
        emptied.extend(EVENT_READING)
    if survival_counted_again:
        emptied.extend(SURVIVAL)
    if measured_again:
        emptied.extend(MEASURED)
    # Emptied before the missing tables are created: on MariaDB a CREATE commits the transaction, and a repair
    # stopped before it leaves the table missing, so that the next init-db does it again in full.
    for table in emptied:
        if table.name in existing:
            connection.execute(delete(table))
    schema.ours.create_all(connection, tables=missing)
    if survival_counted_again:
        _count_survival(connection)
    return Repair(
        recreated=tuple(table.name for table in missing),
        events_read_again=events_read_again,
        survival_counted_again=survival_counted_again,
        derived_again=derived_again,
        measured_again=measured_again,
    )


def _survival_lost(connection: Connection) -> bool:
    """Write outcomes without a survival group: every derived write is counted in its configuration's group
    in the transaction that stores it, so only a repair stopped half-way leaves them apart."""
    written = connection.execute(select(schema.write_outcome.c.event_uid).limit(1)).first()
    grouped = connection.execute(select(schema.survival_group.c.configuration_identifier).limit(1)).first()
    return written is not None and grouped is None


def _count_survival(connection: Connection) -> None:
    """The survival counts of every derived write, each run's at the window it was derived with."""
    w, o = schema.write_outcome, schema.run_outcome
    windows = connection.execute(select(o.c.window_s).distinct()).scalars().all()
    for window in windows:
        survival.add_counts(
            connection,
            w.join(o, and_(o.c.run_uid == w.c.run_uid, o.c.window_s == window)),
            configuration=o.c.configuration_identifier,
            run_uid=w.c.run_uid,
            outcome=w.c.outcome,
            first_change_after_s=w.c.first_change_after_s,
            window_s=int(window) or UNSTORED_WINDOW_S,
        )


def tables_missing(names: list[str]) -> str:
    """The tables named as missing: "table x is missing", or "tables x, y are missing"."""
    if len(names) == 1:
        return f"table {names[0]} is missing"
    return f"tables {', '.join(names)} are missing"
