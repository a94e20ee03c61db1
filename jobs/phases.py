"""The time a job spends in each phase of its batches, summed over the batches."""

from __future__ import annotations

import time


class PhaseTimer:
    """Adds the time since it was last called to a phase's total (an adapters batch's `timer`)."""

    def __init__(self, phases: dict[str, float]) -> None:
        self._phases = phases
        self._last = time.perf_counter()

    def __call__(self, phase: str) -> None:
        now = time.perf_counter()
        self._phases[phase] = self._phases.get(phase, 0.0) + now - self._last
        self._last = now
