"""What each model round was offered, what it asked for, and what ran (001_…, Context: "Tools the model could
not see").

A round is an llm event. nr-llm records a request event right before each provider call, and its toolSpecs
name the tools that call offered; the tool steps after the round, up to the next round, are its calls — a
call that waited for a decision runs at the start of the next segment and still belongs to the round that
asked for it. Only names are read (core.events: toolSpecs, requestedToolCalls/requestedToolNames, toolName).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.events import (
    EventKind,
    Segment,
    is_refusal_shaped,
    offered_tools,
    requested_tools,
    tool_name,
)


@dataclass(frozen=True)
class ModelRound:
    """One model round: where it ran, what it was offered (None: no request names it), asked for and ran."""

    segment: int
    round: int
    offered: tuple[str, ...] | None
    requested: tuple[str, ...]
    ran: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()  # steps nr-llm refused without running them (core.events.is_refusal_shaped)
    # The event uids of its tool steps, ran or refused, in order: where they are, not what the round did.
    steps: tuple[int, ...] = field(default=(), compare=False)

    @property
    def not_offered(self) -> tuple[str, ...]:
        """The tools the round asked for and was not offered, once each; none when no offer is recorded."""
        if self.offered is None:
            return ()
        offered = set(self.offered)
        return tuple(dict.fromkeys(name for name in self.requested if name not in offered))


@dataclass
class _Open:
    segment: int
    round: int
    offered: tuple[str, ...] | None
    requested: tuple[str, ...]
    ran: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)

    def closed(self) -> ModelRound:
        return ModelRound(
            self.segment,
            self.round,
            self.offered,
            self.requested,
            tuple(self.ran),
            tuple(self.refused),
            tuple(self.steps),
        )


def model_rounds(segments: Sequence[Segment]) -> tuple[ModelRound, ...]:
    """The run's model rounds in order: each with the offer of the request right before it and the tool steps
    after it up to the next round (across a decision); tool steps before the first round belong to none."""
    rounds: list[_Open] = []
    offer: tuple[str, ...] | None = None
    for segment in segments:
        for event in segment.events:
            if event.kind is EventKind.REQUEST:
                offer = offered_tools(event)
            elif event.kind is EventKind.LLM:
                rounds.append(_Open(segment.index, event.round, offer, requested_tools(event)))
                offer = None
            elif event.kind is EventKind.TOOL and rounds:
                steps = rounds[-1].refused if is_refusal_shaped(event) else rounds[-1].ran
                steps.append(tool_name(event))
                rounds[-1].steps.append(event.uid)
    return tuple(open_round.closed() for open_round in rounds)


def round_of_steps(rounds: Sequence[ModelRound]) -> dict[int, ModelRound]:
    """Each tool step's model round, by the step's event uid: the round that asked for it, which for a call
    that waited for a decision ran in the segment before the step's own."""
    return {uid: model_round for model_round in rounds for uid in model_round.steps}
