"""tx_runrecord_measure_fact: the facts measure-rates keeps per run and per answer, and what changed since.

Every select names its columns, and none names an editor: be_user, userid, decidedBy and submittedBy are never
selected (DESIGN.md, "Privacy"); tests capture every statement and check it. A batch of conversations counts
its facts and writes those that changed (adapters.measure_batch); the stored facts are counted per period and
group by adapters.tallies.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import Connection, delete, exists, literal, or_, select, update

from adapters import schema
from adapters.dialect.days import day_of
from core.answers import AnswerState, ClaimState, DenialState
from core.facts import Fact
from core.periods import Grain
from core.waits import GoOnState

fact = schema.measure_fact

FACT_KEY = ("run_uid", "message_uid")


# --- what changed since the last measurement ----------------------------------------------------------


def periods_derived(connection: Connection, after: int, upto: int) -> set[tuple[Grain, date]]:
    """The periods of both grains that hold a run derived since the last measurement (its outcome's uid in
    (after, upto]): the rates of an outcome count in them, closed or not."""
    o, f = schema.run_outcome.c, fact.c
    query = (
        select(f.week_start, f.day_start)
        .select_from(schema.run_outcome.join(fact, f.run_uid == o.run_uid))
        .where(o.uid > after, o.uid <= upto)
        .distinct()
    )
    periods: set[tuple[Grain, date]] = set()
    for week, day in connection.execute(query):
        periods.update(((Grain.WEEK, day_of(week)), (Grain.DAY, day_of(day))))
    return periods


# --- facts ----------------------------------------------------------------------------------------------


def delete_every_fact(connection: Connection) -> None:
    """Empty the fact table, every fact to be counted afresh, but for the runs nr-llm purged (DOMAIN.md,
    "Retention"): nothing is left to count them from. Each keeps what it says of the run alone, as
    adapters.measure_batch.facts.fill_purged_runs writes it; what the rules read of its answer goes, so that
    no fact of the earlier rules is counted beside the new ones."""
    f = fact.c
    present = exists(select(literal(1)).where(schema.agentrun.c.uid == f.run_uid))
    connection.execute(delete(fact).where(or_(f.message_uid != 0, f.run_uid == 0, present)))
    connection.execute(update(fact).values(PURGED_RUN_READS))


# What a purged run's fact no longer says (adapters.measure_batch.facts.fill_purged_runs): its answer, its
# "go on" and the exclusions that came with them.
PURGED_RUN_READS: dict[str, Any] = {
    "answer": AnswerState.NONE.value,
    "notice": 0,
    "claim": ClaimState.NONE.value,
    "denial": DenialState.NONE.value,
    "go_on": GoOnState.NONE.value,
    "problems": "",
    "go_on_finished_outside": 0,
    "go_on_second_run": 0,
    "go_on_unknown": 0,
    "go_on_unreadable": 0,
}


def fact_row(fact_value: Fact, now: int) -> dict[str, Any]:
    """The tx_runrecord_measure_fact row of a fact."""
    paths = fact_value.go_on_paths
    return {
        "run_uid": fact_value.run_uid,
        "message_uid": fact_value.message_uid,
        "conversation_uid": fact_value.conversation_uid,
        "configuration_identifier": fact_value.configuration,
        "skill_identifier": fact_value.skill,
        "ended_at": fact_value.ended_at,
        "week_start": fact_value.period(Grain.WEEK),
        "day_start": fact_value.period(Grain.DAY),
        "runs": fact_value.runs,
        "answer": fact_value.answer.value,
        "notice": int(fact_value.notice),
        "claim": fact_value.claim.value,
        "denial": fact_value.denial.value,
        "go_on": fact_value.go_on.value,
        "problems": ",".join(problem.value for problem in fact_value.problems),
        "measured_at": now,
        "go_on_finished_outside": paths.finished_outside,
        "go_on_second_run": paths.second_run,
        "go_on_unknown": paths.unknown,
        "go_on_unreadable": paths.unreadable,
    }
