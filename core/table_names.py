"""What a table name in a write target is (DOMAIN.md, tx_nrllm_agentrun_event).

"A table name in a write target matches [A-Za-z0-9_]{1,64} and the uid is at least 1." Anything else is
unreadable (DESIGN.md rule 6), whatever the database would make of it.
"""

from __future__ import annotations

import re

# A longer text cannot be a table name and is not copied into a VARCHAR column (which would fail on a
# strict server).
MAX_TABLE_NAME = 64

TABLE_NAME = re.compile(rf"[A-Za-z0-9_]{{1,{MAX_TABLE_NAME}}}")


def is_table_name(text: str) -> bool:
    """Whether the text is a table name the way DOMAIN.md says one is."""
    return TABLE_NAME.fullmatch(text) is not None
