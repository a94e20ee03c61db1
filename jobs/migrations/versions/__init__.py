"""The revisions, oldest first; each file holds one, named after its revision id."""
