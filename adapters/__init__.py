"""The only code that builds SQL: one module per table family; adapters.dialect holds what differs
per dialect."""
