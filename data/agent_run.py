"""nr-llm's agent runs as the builder plants them: their events, segments, writes and the run-record entries
they plant (see data/chat.py for the conversation a run belongs to)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from adapters import schema
from core.cards import APPROVE_ANSWER, CardDecision, CardOutcome
from core.outcomes import Action
from core.refused import QUESTION_TOOLS
from core.run_record import DISPLAY_TOOLS
from core.run_status import RunStatus, is_finished
from data.payloads import Privacy, compact_json
from data.records import HistoryRow, Record, new_value
from data.run_segment import Segment

if TYPE_CHECKING:
    from data.chat import Conversation

(QUESTION_TOOL,) = QUESTION_TOOLS  # nr-llm's only tool that asks the editor

# The tools the demo's configurations offer each model round (a request event's toolSpecs: names only, as
# nr-llm keeps them at every privacy level), crm_push_draft a remote (MCP) one. A round that asks for
# another tool was offered it too, except a tool the configurations' tool groups hold back: the model asks
# for it all the same, and the Run page marks it (001_…, Context: "Tools the model could not see").
OFFERED_TOOLS = (
    "get_page",
    "get_page_seo",
    "get_content",
    "update_page_seo",
    "update_content",
    "update_record",
    "create_page_draft",
    QUESTION_TOOL,
    *sorted(DISPLAY_TOOLS),
    "crm_push_draft",
)
HELD_BACK_TOOLS = frozenset({"translate_page"})


@dataclass(frozen=True)
class Write:
    """One tool_write step the builder planted."""

    event_uid: int
    run_uuid: str
    record: Record
    written_at: int
    fields: tuple[str, ...]
    completeness: str | None
    readable: bool = True
    user: int = 1  # the run's be_user: the chatting editor
    own_row: HistoryRow | None = None  # the sys_history row the write inserted


class Run:
    """An nr-llm agent run: its events, segments, writes and the run-record entries it plants."""

    def __init__(self, chat: Conversation, *, at: int, privacy: Privacy, uuid: str | None = None) -> None:
        self.chat = chat
        self.site = chat.site
        self.uid = self.site.rows.uid(schema.agentrun)
        self.uuid = self.site.new_uuid() if uuid is None else uuid
        self.privacy = privacy
        self.started_at = at
        self.clock = float(at)
        self.sequence = 0
        self.round = 0
        self.status = "running"
        self.termination = ""
        self.segments: list[Segment] = [Segment(0, "turn", card_outcomes_before=len(chat.card_outcomes))]
        self.segment.process_start = self._process_start()
        self.waiting_for: str | None = None  # "card" | "question"
        self.pending: list[tuple[str, Record | None, tuple[str, ...]]] = []
        self.beside: list[str] = []  # calls requested in the waiting round beside the proposal or question
        self.writes: list[Write] = []
        self.activity: list[dict[str, Any]] = []
        self.wrote = False

    @property
    def segment(self) -> Segment:
        return self.segments[-1]

    @property
    def now(self) -> int:
        return int(self.clock)

    # --- events -------------------------------------------------------------------------------------------

    def _event(
        self, kind: str, payload: dict[str, Any], *, ms: float = 0.0, round_: int | None = None
    ) -> int:
        self.clock += ms / 1000.0
        uid = self.site.rows.uid(schema.agentrun_event)
        round_value = self.round if round_ is None else round_
        # nr-llm's persister writes an approval's and an input's payload as the decision alone.
        plain = kind in ("approval", "input")
        body = payload if plain else {"kind": kind, "round": round_value, "durationMs": ms, **payload}
        self.site.rows.add(
            schema.agentrun_event,
            {
                "uid": uid,
                "run": self.uid,
                "sequence": self.sequence,
                "kind": kind,
                "round": round_value,
                "duration_ms": round(ms, 2),
                "payload": compact_json(body),
                "crdate": self.now,
            },
        )
        self.sequence += 1
        return uid

    def _request(self, also: Sequence[str] = ()) -> None:
        """A new round's context and request, as nr-llm records them before it calls the provider."""
        self.round += 1
        self._event("context", {"contextBudget": 128000}, ms=0.0)
        self._event("request", {"toolSpecs": [*OFFERED_TOOLS, *also]})

    def llm(self, *tools: str, ms: float = 1800.0, finish: str | None = None) -> None:
        """A model round that requests the given tool calls (none: the final answer)."""
        also = [
            tool for tool in dict.fromkeys(tools) if tool not in OFFERED_TOOLS and tool not in HELD_BACK_TOOLS
        ]
        self._request(also)
        payload: dict[str, Any] = {"finishReason": finish or ("tool_calls" if tools else "stop")}
        payload |= {"promptTokens": 2100, "completionTokens": 180, "totalTokens": 2280}
        if self.privacy == Privacy.FULL:
            calls = [
                {"id": f"call_{self.round}_{i}", "name": t, "arguments": "{}"} for i, t in enumerate(tools)
            ]
            payload["requestedToolCalls"] = calls
            payload["content"] = ""
        else:
            payload["requestedToolNames"] = list(tools)
            payload["contentLength"] = 0
        self._event("llm", payload, ms=ms)
        self.activity.append({"kind": "llm", "round": self.round, "ms": int(ms)})

    def tool(
        self,
        name: str,
        *,
        ms: float = 140.0,
        error: bool = False,
        counted: bool = True,
        arguments: str = '{"pageId":1}',
        result: str = '{"ok":true}',
    ) -> int:
        """A tool step; `counted` is whether the chat's record lists it (refused calls are not)."""
        payload: dict[str, Any] = {"toolName": name, "toolIsError": error}
        if self.privacy == Privacy.FULL:
            payload |= {"toolArguments": arguments, "toolResult": result}
        else:
            payload |= {"toolArgumentsLength": len(arguments), "toolResultLength": len(result)}
        uid = self._event("tool", payload, ms=ms)
        if counted and name != QUESTION_TOOL and name not in DISPLAY_TOOLS:
            self.segment.count(name, failed=error)
        self.activity.append(
            {"kind": "tool", "round": self.round, "ms": int(ms), "tool": name, "error": error}
        )
        return uid

    def display(self, name: str = "chat_set_progress") -> None:
        """A call that only drives the chat's display (left out of the record)."""
        self.llm(name, ms=900.0)
        self.tool(name, ms=4.0)

    def write(
        self,
        record: Record,
        fields: Mapping[str, Any] | Sequence[str],
        *,
        tool: str = "update_record",
        completeness: str | None = "complete",
        history: bool = True,
        history_delay: int = 0,
        raw_target: Mapping[str, Any] | str | None = None,
    ) -> Write:
        """The tool runs, the DataHandler writes the record, and nr-llm leaves a tool_write step.

        The row is inserted at the write and stamped when the segment's process started (the conversation's
        `processes`); without processes, `history_delay` seconds after the write. `history=False` plants a
        write without its sys_history row; `raw_target` replaces the write target with a malformed one (a
        payload that is not JSON when given as text).
        """
        changes = dict(fields) if isinstance(fields, Mapping) else {f: new_value(f) for f in fields}
        self.tool(tool, ms=85.0)
        written_at = self.now
        own: HistoryRow | None = None
        if history and not record.gone:
            old = {name: record.value(name) for name in changes}
            for name, value in old.items():
                record.before_ai.setdefault(name, value)
            record.values.update(changes)
            started = self.segment.process_start
            own = self.site.history_row(
                record,
                Action.MODIFY,
                at=written_at + history_delay if started is None else started,
                moment=written_at,
                new=changes,
                old=old,
                by=self.chat.editor,
                names_run=self.uuid if self.chat.names_runs else "",
            )
        return self._tool_write(record, tool, tuple(changes), completeness, written_at, raw_target, own)

    def _tool_write(
        self,
        record: Record,
        tool: str,
        fields: tuple[str, ...],
        completeness: str | None,
        written_at: int,
        raw_target: Mapping[str, Any] | str | None,
        own: HistoryRow | None = None,
    ) -> Write:
        payload: dict[str, Any] = {
            "toolName": tool,
            "writeTargetTable": record.table,
            "writeTargetUid": record.uid,
        }
        if completeness is not None:
            payload["writeCompleteness"] = completeness
        readable = raw_target is None
        if isinstance(raw_target, Mapping):
            payload = {"toolName": tool, **raw_target}
        uid = self._event("tool_write", payload, ms=0.0)
        if isinstance(raw_target, str):
            self.site.rows.rows(schema.agentrun_event)[-1]["payload"] = raw_target
        planted = Write(
            uid,
            self.uuid,
            record,
            written_at,
            fields,
            completeness,
            readable=readable,
            user=self.chat.editor,
            own_row=own,
        )
        self.writes.append(planted)
        record.ai_fields.update(fields)
        self.wrote = True
        self.segment.record_write(record.ref, completeness or "unconfirmed")
        return planted

    # --- cards and questions ------------------------------------------------------------------------------

    def propose(
        self, tool: str, record: Record | None, *, fields: Sequence[str] = (), beside: Sequence[str] = ()
    ) -> None:
        """The model asks for a write that needs approval: a card; the run waits. `beside` are further calls
        of the same round, which nr-llm holds back: a question is refused after the approval (000_…,
        amendment: "After an approval: a question … the model asked in the same turn"), any other call when
        the run begins to wait, beside the proposal (the table's "Beside a proposal" row)."""
        self.llm(tool, *beside)
        for held in beside:
            if held != QUESTION_TOOL:
                self.tool(held, ms=0.0, error=True, counted=False)
        self.pending = [(tool, record, tuple(fields))]
        self.beside = [held for held in beside if held == QUESTION_TOOL]
        self._wait("card", [tool])

    def ask(self, *, beside: Sequence[str] = ()) -> None:
        """The model asks the editor a question (ask_choice); the run waits for input."""
        self.llm(QUESTION_TOOL, *beside)
        self.pending = [(QUESTION_TOOL, None, ())]
        self.beside = list(beside)
        self._wait("question", [QUESTION_TOOL])

    def _wait(self, kind: str, tools: list[str]) -> None:
        self.waiting_for = kind
        waits = RunStatus.WAITING_FOR_APPROVAL if kind == "card" else RunStatus.WAITING_FOR_INPUT
        self.status = waits.value
        self.segment.waiting = tools
        self._end_segment("waiting")

    def _end_segment(self, ended: str) -> None:
        segment = self.segment
        segment.ended = ended
        segment.at = self.now
        segment.card_outcomes_before = len(self.chat.card_outcomes)
        if not segment.has_answer:
            segment.position = self.chat.position

    def _open_segment(self, opened_by: str) -> Segment:
        segment = Segment(len(self.segments), opened_by, card_outcomes_before=len(self.chat.card_outcomes))
        segment.process_start = self._process_start()
        self.segments.append(segment)
        return segment

    def _process_start(self) -> int | None:
        """When the process for the request that opens a segment now started."""
        processes = self.chat.processes
        return None if processes is None else processes.started(self.now)

    def _decide(self, at: int | None) -> tuple[str, Record | None, tuple[str, ...]]:
        if not self.pending:
            raise ValueError("the run waits for no decision")
        self.clock = max(self.clock, float(at if at is not None else self.now + 30))
        decided = self.pending[0]
        self.pending = []
        self.waiting_for = None
        self.status = "running"
        return decided

    def approve(
        self,
        *,
        at: int | None = None,
        changes: Mapping[str, Any] | None = None,
        completeness: str | None = "complete",
        history: bool = True,
        history_delay: int = 0,
        raw_target: Mapping[str, Any] | str | None = None,
        permitted: bool = True,
    ) -> Write | None:
        """The editor answers "Übernehmen": the call runs (and writes), or nr-llm no longer permits it."""
        waiting_segment = self.segment
        tool, record, fields = self._decide(at)
        self._event("approval", {"approved": True, "decidedBy": self.chat.editor}, round_=0)
        self.activity.append({"kind": "approval", "round": 0, "ms": 0, "approved": True})
        self._open_segment("approval")
        written: Write | None = None
        if not permitted:
            self.tool(tool, ms=0.0, error=True)  # approved, tool no longer offered: failure (not_permitted)
        elif record is None:
            self.tool(tool, ms=210.0)  # a remote write: no write target
        else:
            written = self.write(
                record,
                changes if changes is not None else fields,
                tool=tool,
                completeness=completeness,
                history=history,
                history_delay=history_delay,
                raw_target=raw_target,
            )
        for held in self.beside:
            self.tool(held, ms=0.0, error=True, counted=False)  # held back while the run waited
        self.beside = []
        self._card_outcome(waiting_segment, tool, record, fields, CardDecision.APPROVED, APPROVE_ANSWER)
        return written

    def decline(self, answer: str = "Überspringen", *, at: int | None = None) -> None:
        """The editor declines: "Behalten", "Überspringen", "Andere Variante" or a plain "abgelehnt"."""
        waiting_segment = self.segment
        tool, record, fields = self._decide(at)
        self._event("approval", {"approved": False, "decidedBy": self.chat.editor}, round_=0)
        self.activity.append({"kind": "approval", "round": 0, "ms": 0, "approved": False})
        segment = self._open_segment("approval")
        self.tool(tool, ms=0.0, error=True, counted=False)  # a declined card's call: refused, no entry
        for held in self.beside:
            self.tool(held, ms=0.0, error=True, counted=False)
        self.beside = []
        if answer == "abgelehnt":
            segment.decision = (tool, answer)  # a plain denial leaves no card outcome
            self.chat.approval_decision = "deny"
        else:
            self._card_outcome(waiting_segment, tool, record, fields, CardDecision.DECLINED, answer)

    def answer_question(self, *, at: int | None = None, permitted: bool = True) -> None:
        """The editor picks a reply button: nr-llm runs the question's tool with the answer."""
        self._decide(at)
        self._event("input", {"submittedBy": self.chat.editor}, round_=0)
        self._open_segment("input")
        self.tool(QUESTION_TOOL, ms=3.0 if permitted else 0.0, error=not permitted)
        for held in self.beside:
            self.tool(held, ms=0.0, error=True, counted=False)
        self.beside = []
        self.chat.approval_decision = "input"

    def _card_outcome(
        self,
        waiting: Segment,
        tool: str,
        record: Record | None,
        fields: tuple[str, ...],
        decision: CardDecision,
        answer: str,
    ) -> None:
        outcome = CardOutcome(
            position=waiting.position,
            run_uuid=self.uuid,
            tool=tool,
            record=record.ref if record is not None else "",
            fields=fields,
            decision=decision,
            answer=answer,
            at=self.now,
        )
        self.chat.card_outcomes.append(outcome.to_json())
        self.chat.approval_decision = "approve" if decision == CardDecision.APPROVED else "deny"

    def left_undecided(self, by: str) -> None:
        """A card or question left open by a new message or the end of a tour (000_…, 'Decision')."""
        if self.waiting_for is None:
            return
        self.segment.undecided = (self.waiting_for, by)
        self.waiting_for = None
        self.pending = []

    # --- answers and the end ------------------------------------------------------------------------------

    def answer(self, text: str, *, notice: str | None = None, notice_args: str | None = None) -> int:
        """The model's final answer of this segment, stored as an assistant message."""
        self.llm(ms=2400.0)
        self.segment.has_answer = True
        self.segment.answered = (self.now, notice)
        self.segment.position = self.chat.assistant(
            text, at=self.now, run=self, notice=notice, notice_args=notice_args
        )
        return self.segment.position

    def say(self, text: str) -> int:
        """An assistant message of the current segment without ending it (a proposal's text)."""
        self.segment.has_answer = True
        self.segment.answered = (self.now, None)
        self.segment.position = self.chat.assistant(text, at=self.now, run=self)
        return self.segment.position

    def finish(self, status: str = "completed", *, termination: str | None = None) -> None:
        """The run ends: completed, failed or cancelled."""
        self.status = status
        self.termination = termination or status
        self._end_segment({"completed": "completed", "failed": "failed", "cancelled": "cancelled"}[status])
        self.chat.tstamp = max(self.chat.tstamp, self.now)

    @property
    def completed_answer(self) -> tuple[int, str | None] | None:
        """(crdate, notice) of a completed run's last assistant message in its last segment; else None."""
        return self.segment.answered if self.status == "completed" else None

    def fail_before_steps(self) -> None:
        """The turn failed before nr-llm returned its steps, the segment's end unknown: the provider refused
        its first call, so the run recorded the round's context and request but no model round (nr-llm checks
        the provider's key inside the call, after recording the request)."""
        self._request()
        self.status = "failed"
        self.termination = "provider_failed"
        self.segment.at = self.now
        self.segment.position = self.chat.position
        self.segment.card_outcomes_before = len(self.chat.card_outcomes)

    def store(self) -> None:
        """Write the agent-run row as the run stands now (the conversation does, when it is closed)."""
        self.site.rows.add(
            schema.agentrun,
            {
                "uid": self.uid,
                "uuid": self.uuid,
                "status": self.status,
                "configuration_uid": self.site.configuration(
                    self.chat.configuration, self.chat.configuration
                ),
                "configuration_identifier": self.chat.configuration,
                "be_user": self.chat.editor,
                "iterations": self.round,
                "total_tokens": 2280 * self.round,
                "termination_reason": self.termination if is_finished(self.status) else "",
                "started_at": self.started_at,
                "finished_at": self.now if is_finished(self.status) else 0,
                "tstamp": self.now,
                "crdate": self.started_at,
            },
        )

    def call_outcome(self, outcome: str, *, at: int) -> None:
        """A tx_nrllm_call_outcome row under the run's correlation id: the editor's explicit rating
        (helpful, not_helpful), or an observed outcome that nr-llm's own deriver wrote."""
        table = schema.call_outcome
        row = {"uid": self.site.rows.uid(table), "correlation_id": self.uuid, "outcome": outcome}
        self.site.rows.add(table, row | {"crdate": at, "tstamp": at})

    def planted_entries(self) -> list[dict[str, Any]]:
        """The run-record entries the chat stored for this run's segments."""
        return [segment.entry(self.uuid) for segment in self.segments]
