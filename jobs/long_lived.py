"""The objects a process holds before its first measurement (its modules, their tables and statements' parts)
live as long as the process: the garbage collector is told so once, so that its full passes during the job no
longer walk them. A full pass over a freshly started job's objects took some 40 ms, one to two of them in a
rerun of measure-rates of a quarter of a second; derive-outcomes gained nothing from it (docs/speed-log.md,
"Collections")."""

from __future__ import annotations

import functools
import gc


@functools.cache
def freeze_before_first_job() -> None:
    """Move every object tracked now to the collector's permanent generation; later calls do nothing."""
    gc.freeze()
