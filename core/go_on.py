"""What followed a stored "go on" sent while an approval waited (001_…, "Decision"): the path the chat took.

001_ gives a "go on" phrase sent while the conversation waits for an approval four paths. Two of them store
nothing (still waiting; decided elsewhere and still running), so a stored "go on" message took one of the
other two, and each leaves its own trace:

* decided elsewhere and finished: the message is stored with a line naming the records, notice
  runFinishedOutside;
* anything the run cannot answer, the ordinary path: the message starts a run over the same transcript; while
  the waiting run has not ended, that is the second run 001_ was written about ("Context": it "abandoned the
  approval and started a second run over the same transcript").

A message is read by what followed it (PATHS); where neither trace can be read, its path is unknown. It is
counted at the run that waited — the period and configuration of that run's end — and an unreadable user
message in its place is excluded, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from core.answers import ConversationInput, StoredMessage
from core.claims import is_go_on
from core.error_codes import Notice
from core.measured_runs import RunRow
from core.run_status import is_finished
from core.transcript import Role, TranscriptMessage, UnreadableMessage
from core.waits import Wait


class GoOnPath(StrEnum):
    FINISHED_OUTSIDE = "finished_outside"  # stored with a runFinishedOutside line
    SECOND_RUN = "second_run"  # a run started over the same transcript while the waiting run had not ended
    UNKNOWN = "unknown"  # neither can be read from what followed


@dataclass(frozen=True)
class Followed:
    """What followed a stored "go on" message, as far as the stored rows tell."""

    line: bool  # a runFinishedOutside line: on the message itself or on the next stored message
    second_run: bool  # a run started at or after it, before the next user message, the waiting run not ended


# (line, second run) → path: every combination, so that no message is left without one. The line is the
# chat's own word on how it answered the message (001_: the conversation is idle then), so a run that
# started afterwards belongs to a later turn, not to the "go on".
PATHS: Mapping[tuple[bool, bool], GoOnPath] = {
    (True, False): GoOnPath.FINISHED_OUTSIDE,
    (True, True): GoOnPath.FINISHED_OUTSIDE,
    (False, True): GoOnPath.SECOND_RUN,
    (False, False): GoOnPath.UNKNOWN,
}


def path_of(followed: Followed) -> GoOnPath:
    """The path a stored "go on" took, by what followed it (PATHS)."""
    return PATHS[(followed.line, followed.second_run)]


@dataclass(frozen=True)
class GoOnPaths:
    """The stored "go on" messages counted at one waiting run, by path, and the user messages in their place
    that cannot be read."""

    finished_outside: int = 0
    second_run: int = 0
    unknown: int = 0
    unreadable: int = 0

    def of(self, path: GoOnPath) -> int:
        """The messages that took `path`."""
        return int(getattr(self, path.value))

    @property
    def messages(self) -> int:
        """Every stored "go on" message counted here, whatever its path (the split's denominator)."""
        return self.finished_outside + self.second_run + self.unknown

    @property
    def empty(self) -> bool:
        """Nothing counted and nothing excluded."""
        return self.messages == 0 and self.unreadable == 0

    def plus(self, path: GoOnPath | None) -> GoOnPaths:
        """One message more on `path`; None: one unreadable user message more."""
        if path is None:
            return replace(self, unreadable=self.unreadable + 1)
        return replace(self, **{path.value: self.of(path) + 1})


def go_on_paths(
    conversation: ConversationInput, runs: Sequence[RunRow], waits: Mapping[int, Sequence[Wait]] | None
) -> dict[int, GoOnPaths]:
    """Each stored "go on" message sent while an approval waited, by its path, at the run that waited.

    Sent while an approval waited: inside a run's wait (core.waits), or answered by a runFinishedOutside line
    — 001_ writes that line only for a "go on" while the conversation still waits for an approval the run
    has had elsewhere, so the conversation waited although the run no longer did; it is counted at the last
    run that waited for an approval and started before it. `waits`: the waits by run uid; None when the
    conversation holds neither a "go on" nor an unreadable user message (core.waits.needs_waits).
    """
    if waits is None:
        return {}
    waiting = sorted(
        (run for run in runs if run.waited_for_approval), key=lambda run: (run.started_at, run.uid)
    )
    counted: dict[int, GoOnPaths] = {}
    messages = conversation.messages
    for index, message in enumerate(messages):
        read = message.read
        unreadable = isinstance(read, UnreadableMessage) and message.role == Role.USER.value
        go_on = isinstance(read, TranscriptMessage) and read.role is Role.USER and is_go_on(read.content)
        if not (go_on or unreadable):
            continue
        line = _line_follows(messages, index)
        run = _waiting_run(message.crdate, waiting, waits, line=line)
        if run is None:
            continue
        path = None if unreadable else path_of(Followed(line, _second_run(messages, index, run, runs)))
        counted[run.uid] = counted.get(run.uid, GoOnPaths()).plus(path)
    return counted


def _carries_line(message: StoredMessage) -> bool:
    read = message.read
    return isinstance(read, TranscriptMessage) and read.notice is Notice.RUN_FINISHED_OUTSIDE


def _line_follows(messages: Sequence[StoredMessage], index: int) -> bool:
    """The message, or the next stored one, carries the runFinishedOutside line."""
    following = messages[index : index + 2]
    return any(_carries_line(message) for message in following)


def _waiting_run(
    at: int, waiting: Sequence[RunRow], waits: Mapping[int, Sequence[Wait]], *, line: bool
) -> RunRow | None:
    """The run whose wait holds `at`; with a runFinishedOutside line, else the last run that waited and
    started at or before `at`; None: no approval waited."""
    for run in waiting:
        if any(wait.start <= at and (wait.end is None or at <= wait.end) for wait in waits.get(run.uid, ())):
            return run
    if line:
        before = [run for run in waiting if run.started_at <= at]
        return before[-1] if before else None
    return None


def _ended_by(run: RunRow, at: int) -> bool:
    """The run had ended at `at`: it is completed, failed or cancelled, and its end is not later."""
    return is_finished(run.status) and run.ended_at <= at


def _second_run(
    messages: Sequence[StoredMessage], index: int, waited: RunRow, runs: Sequence[RunRow]
) -> bool:
    """A run started at or after the message and before the next user message (the one it answers), while
    the run that waited had not ended."""
    at = messages[index].crdate
    later = [m.crdate for m in messages[index + 1 :] if m.role == Role.USER.value]
    until = later[0] if later else None
    return any(
        run.uid != waited.uid
        and run.started_at >= at
        and (until is None or run.started_at < until)
        and not _ended_by(waited, run.started_at)
        for run in runs
    )
