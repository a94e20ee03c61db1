"""What followed a stored "go on" while an approval waited (core.go_on): the paths of 001_…, "Decision"."""

from __future__ import annotations

import pytest

from core.facts import conversation_facts
from core.go_on import PATHS, Followed, GoOnPath, GoOnPaths, go_on_paths, path_of
from core.measured_runs import RunRow
from core.waits import Wait
from tests.unit.core.measure_helpers import Chat, T, a_run

# The run that waits: suspended at T - 300 for a card, still waiting when the editor writes at T.
WAITING = a_run(1, status="waiting_for_approval", ended_at=T - 300, started_at=T - 600, events=3)
WAITS = {1: (Wait(T - 300, None),)}


def decided_run(end: int) -> RunRow:
    """Run 1 approved after the message (elsewhere) and completed at `end`."""
    return a_run(1, ended_at=end, started_at=T - 600, approvals=1, events=5)


@pytest.mark.parametrize(
    ("line", "second_run", "path"),
    [
        (True, False, GoOnPath.FINISHED_OUTSIDE),
        (True, True, GoOnPath.FINISHED_OUTSIDE),  # the chat's own line decides
        (False, True, GoOnPath.SECOND_RUN),
        (False, False, GoOnPath.UNKNOWN),
    ],
)
def test_the_path_is_read_from_the_line_first_then_a_second_run_else_unknown(
    line: bool, second_run: bool, path: GoOnPath
) -> None:
    followed = Followed(line=line, second_run=second_run)

    result = path_of(followed)

    assert result is path


def test_the_path_table_gives_every_combination_a_path() -> None:
    combinations = {(line, second) for line in (True, False) for second in (True, False)}

    assert set(PATHS) == combinations


def _followed_by(
    *,
    line: bool = False,
    run_at: int | None = None,
    next_user_at: int | None = None,
    waited: RunRow = WAITING,
) -> GoOnPaths:
    """'weiter' at T while `waited` waits, then what the case names; the paths counted at run 1."""
    chat = Chat()
    chat.say("user", "Lege eine Unterseite an.", T - 700)
    chat.say("user", "weiter", T)
    if line:
        chat.say("assistant", "The run finished outside the chat.", T + 1, notice="runFinishedOutside")
    runs = [waited]
    if run_at is not None:
        runs.append(a_run(2, ended_at=run_at + 60, started_at=run_at, events=5))
    if next_user_at is not None:
        chat.say("user", "Lege die Seite Sommerfest an.", next_user_at)

    counted = go_on_paths(chat.value(), runs, WAITS)

    return counted.get(1, GoOnPaths())


# What followed "weiter" at T while run 1 waited → the path it is counted under.
FOLLOWERS: list[tuple[str, dict[str, object], GoOnPath]] = [
    ("a run started two seconds later", {"run_at": T + 2}, GoOnPath.SECOND_RUN),
    ("a run started in the same second", {"run_at": T}, GoOnPath.SECOND_RUN),
    ("the runFinishedOutside line", {"line": True}, GoOnPath.FINISHED_OUTSIDE),
    ("the line, then a run", {"line": True, "run_at": T + 5}, GoOnPath.FINISHED_OUTSIDE),
    ("nothing", {}, GoOnPath.UNKNOWN),
    ("a run only after the next request", {"next_user_at": T + 50, "run_at": T + 52}, GoOnPath.UNKNOWN),
    ("a run that started before the message", {"run_at": T - 100}, GoOnPath.UNKNOWN),
    (
        "a run after the run that waited, decided since, had ended",
        {"run_at": T + 20, "waited": decided_run(T + 10)},
        GoOnPath.UNKNOWN,
    ),
    (
        "a run while the run that waited, decided since, still ran",
        {"run_at": T + 20, "waited": decided_run(T + 30)},
        GoOnPath.SECOND_RUN,
    ),
]


@pytest.mark.parametrize(("kwargs", "path"), [pytest.param(k, p, id=case) for case, k, p in FOLLOWERS])
def test_a_stored_go_on_is_counted_by_what_followed_it(kwargs: dict[str, object], path: GoOnPath) -> None:
    counted = _followed_by(**kwargs)  # type: ignore[arg-type]

    assert counted == GoOnPaths().plus(path)


def test_a_go_on_after_a_decision_elsewhere_counts_with_the_line_at_the_run_that_waited() -> None:
    chat = Chat()
    chat.say("user", "Lege eine Unterseite an.", T - 1000)
    chat.say("user", "habe alles freigegeben", T)  # the run was approved in AI Tasks and has finished
    chat.say(
        "assistant",
        "The run finished outside the chat and wrote pages:7.",
        T + 1,
        notice="runFinishedOutside",
    )
    earlier = a_run(1, ended_at=T - 5000, started_at=T - 6000, approvals=1, events=4)
    decided = a_run(2, ended_at=T - 30, started_at=T - 990, approvals=1, tool_writes=1, events=6)
    waits = {1: (Wait(T - 5900, T - 5800),), 2: (Wait(T - 950, T - 60),)}

    counted = go_on_paths(chat.value(), [earlier, decided], waits)

    assert counted == {2: GoOnPaths(finished_outside=1)}


def test_a_go_on_sent_after_the_decision_without_the_line_is_not_counted() -> None:
    chat = Chat()
    chat.say("user", "habe alles freigegeben", T)
    decided = a_run(1, ended_at=T - 30, started_at=T - 990, approvals=1, events=6)

    counted = go_on_paths(chat.value(), [decided], {1: (Wait(T - 950, T - 60),)})

    assert counted == {}


def test_a_longer_sentence_with_a_phrase_is_a_request_and_not_counted() -> None:
    chat = Chat()
    chat.say("user", "weiter mit der nächsten Seite bitte", T)

    counted = go_on_paths(chat.value(), [WAITING], WAITS)

    assert counted == {}


def test_an_unreadable_user_message_inside_a_wait_is_excluded_and_given_no_path() -> None:
    chat = Chat()
    chat.broken("user", T)

    counted = go_on_paths(chat.value(), [WAITING, a_run(2, started_at=T + 2, events=3)], WAITS)

    assert counted == {1: GoOnPaths(unreadable=1)}


def test_each_go_on_counts_at_the_run_whose_wait_holds_it() -> None:
    chat = Chat()
    chat.say("user", "weiter", T)
    chat.say("user", "go on", T + 500)
    first = a_run(1, status="completed", ended_at=T + 300, started_at=T - 600, approvals=1, events=5)
    second = a_run(2, status="waiting_for_approval", ended_at=T + 400, started_at=T + 200, events=3)
    waits = {1: (Wait(T - 300, T + 50),), 2: (Wait(T + 400, None),)}

    counted = go_on_paths(chat.value(), [first, second], waits)

    assert counted == {1: GoOnPaths(second_run=1), 2: GoOnPaths(unknown=1)}


def test_a_conversation_without_a_go_on_or_an_unreadable_user_message_counts_none() -> None:
    chat = Chat()
    chat.say("user", "weiter", T)

    counted = go_on_paths(chat.value(), [WAITING], None)

    assert counted == {}


def test_the_fact_of_the_run_that_waited_carries_its_go_on_paths_and_the_others_none() -> None:
    chat = Chat()
    chat.say("user", "weiter", T)
    again = a_run(2, ended_at=T + 60, started_at=T + 2, events=5, approvals=1, tool_writes=1)

    facts = conversation_facts(chat.value(), [WAITING, again], (), {}, {**WAITS, 2: (Wait(T + 10, T + 40),)})

    assert [(fact.run_uid, fact.go_on_paths) for fact in facts] == [
        (1, GoOnPaths(second_run=1)),
        (2, GoOnPaths()),
    ]
