"""What a write target's table name and uid are (DOMAIN.md, tx_nrllm_agentrun_event).

"A table name in a write target matches [A-Za-z0-9_]{1,64} and the uid is at least 1." Anything else is
unreadable (DESIGN.md rule 6), whatever the database would make of it; so is a uid above MAX_RECORD_UID.
"""

from __future__ import annotations

import re

# A longer text cannot be a table name and is not copied into a VARCHAR column (which would fail on a
# strict server).
MAX_TABLE_NAME = 64

# The largest uid a write target can name: sys_history.recuid is a signed int(11), so a larger uid has no
# history row to match and is no record the derivation can judge; read as "the record gone" it would count as
# DISCARDED, a fact nothing shows. core.events and the SQL (adapters.dialect.json.json_uid) both call it
# unreadable, so the two interpreters agree (DESIGN.md rule 6).
MAX_RECORD_UID = 2_147_483_647

TABLE_NAME = re.compile(rf"[A-Za-z0-9_]{{1,{MAX_TABLE_NAME}}}")


def is_table_name(text: str) -> bool:
    """Whether the text is a table name the way DOMAIN.md says one is."""
    return TABLE_NAME.fullmatch(text) is not None
