"""How fast the command line answers when it has no database work to do: `runrecord --help`, a command's help,
an argument error and a malformed value (jobs.cli_values), each the median of fresh processes, beside a bare
interpreter's start measured in the same run (the baseline).

    python -m benchmarks.bench_cli [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNRECORD = str(Path(sys.executable).with_name("runrecord"))
CASES = {
    "baseline: python -c pass": [sys.executable, "-c", "pass"],
    "runrecord --help": [RUNRECORD, "--help"],
    "runrecord derive-outcomes --help": [RUNRECORD, "derive-outcomes", "--help"],
    "runrecord measure-rates --grain x (argument error)": [RUNRECORD, "measure-rates", "--grain", "x"],
    "runrecord compare edited_rate --at 2026-99-99 (a value)": [
        RUNRECORD,
        "compare",
        "edited_rate",
        "--at",
        "2026-99-99",
    ],
}


def median_seconds(command: list[str], repeats: int) -> float:
    """The median wall time of `repeats` runs of `command`, each a fresh process."""
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15, help="fresh processes per command (default 15)")
    repeats = parser.parse_args().repeats
    median_seconds(CASES["runrecord --help"], 2)  # warm the file cache
    baseline = None
    print(f"{'command':<58} {'seconds':>8} {'÷ baseline':>11}")
    for name, command in CASES.items():
        seconds = median_seconds(command, repeats)
        baseline = baseline or seconds
        print(f"{name:<58} {seconds:8.3f} {seconds / baseline:11.1f}")


if __name__ == "__main__":
    main()
