"""How long reading the refused calls of a 500-step run takes (goal: under 5 ms).

Run: python benchmarks/bench_refused.py [--steps 500] [--repeats 201]

Prints the median over the repeats of
  * baseline: iterating the run's events and touching each one's kind (no JSON decoding, no rules),
  * read: split_segments + read_segment of every segment (what the activity list and the record both do),
  * entries: build_entries over the same segments (the run record, which reads the segments again),
  * parse: parse_event of every row from its JSON text (the job layer's part, for scale),
and each figure's ratio to the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from core.events import Event, EventKind, parse_event, split_segments
from core.refused import SegmentContext, read_segment
from core.run_record import build_entries

GOAL_MS = 5.0


def tour(steps: int) -> tuple[Event, ...]:
    """A tour of approved and declined cards with reads, held calls and refusals, `steps` tool steps long."""
    events: list[Event] = []
    made = 0
    current_round = 0

    def add(kind: EventKind, payload: dict[str, Any], ms: float = 0.0) -> None:
        number = len(events)
        event_round = 0 if kind in (EventKind.APPROVAL, EventKind.INPUT) else current_round
        full = {"kind": kind.value, "round": event_round, "durationMs": ms, **payload}
        events.append(Event(number + 1, number, kind, event_round, ms, full, 1_767_225_600 + number))

    def step(name: str, ms: float, error: bool = False) -> None:
        nonlocal made
        add(EventKind.TOOL, {"toolName": name, "toolIsError": error}, ms)
        made += 1

    def model(tools: list[str]) -> None:
        nonlocal current_round
        current_round += 1
        add(EventKind.REQUEST, {"toolSpecs": ["read_page", "update_page"]})
        add(EventKind.LLM, {"finishReason": "tool_calls", "requestedToolNames": tools}, 900.0)

    card = 0
    model(["read_page", "chat_set_progress"])
    step("read_page", 35.0)
    step("chat_set_progress", 2.0)
    while made < steps:
        model(["update_page", "create_page"])
        step("create_page", 0.0, error=True)  # held beside the proposal
        card += 1
        add(EventKind.APPROVAL, {"approved": card % 3 != 0})
        step("update_page", 0.0 if card % 3 == 0 else 48.0, error=card % 3 == 0)
        if card % 3:
            add(
                EventKind.TOOL_WRITE,
                {"toolName": "update_page", "writeTargetTable": "pages", "writeTargetUid": 7},
            )
        model(["read_page", "search", "chat_highlight_element"])
        step("read_page", 30.0)
        step("search", 4.0, error=card % 5 == 0)
        step("chat_highlight_element", 1.5)
    model([])
    return tuple(events)


def median_ms(action: Callable[[], object], repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        action()
        timings.append(time.perf_counter_ns() - start)
    return statistics.median(timings) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=201)
    args = parser.parse_args()

    events = tour(args.steps)
    tool_steps = sum(1 for event in events if event.kind is EventKind.TOOL)
    rows = [
        (e.uid, e.sequence, e.kind.value, e.round, e.duration_ms, json.dumps(dict(e.payload)), e.crdate)
        for e in events
    ]
    context = SegmentContext("Überspringen")

    def baseline() -> int:
        count = 0
        for event in events:
            if event.kind is EventKind.TOOL:
                count += 1
        return count

    def read() -> int:
        return sum(len(read_segment(segment, previous=context)) for segment in split_segments(events))

    def entries() -> object:
        return build_entries("run", split_segments(events), status="completed", position=2)

    def parse() -> object:
        return [parse_event(*row) for row in rows]

    figures = {name: median_ms(action, args.repeats) for name, action in [
        ("baseline", baseline), ("read", read), ("entries", entries), ("parse", parse),
    ]}  # fmt: skip
    base = figures["baseline"]
    print(f"{tool_steps} tool steps, {len(events)} events, {len(split_segments(events))} segments, "
          f"median of {args.repeats} repeats")  # fmt: skip
    for name, value in figures.items():
        print(f"  {name:<9} {value:8.3f} ms   {value / base:7.1f}x baseline")
    verdict = "within" if figures["read"] < GOAL_MS else "OVER"
    print(f"reading the refused calls: {figures['read']:.3f} ms, {verdict} the {GOAL_MS:.0f} ms goal")


if __name__ == "__main__":
    main()
