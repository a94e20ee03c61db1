"""Small pieces of the pages: each owns its session-state key and exposes `show(..., key=...)`."""
