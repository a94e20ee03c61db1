"""A job's process tells the garbage collector once that what it held before its first job lives on."""

from __future__ import annotations

import gc

import pytest

from jobs import long_lived


def test_the_objects_held_before_the_first_job_are_frozen_once_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(len(frozen)))
    long_lived.freeze_before_first_job.cache_clear()
    try:
        long_lived.freeze_before_first_job()
        long_lived.freeze_before_first_job()
    finally:
        long_lived.freeze_before_first_job.cache_clear()

    assert frozen == [0]
