"""Every difference between SQLite, MariaDB and PostgreSQL, one module per concept, each tested on all three.

* `names`: the dialect names.
* `bulk`: insert-or-ignore, upsert, many rows in one statement, uid sequences after explicit uids.
* `plans`: plans that hold without statistics: fences, a batch's keys in one parameter, one probe per key.
* `json`: JSON documents read without ever failing on a text that is not JSON; the keys of a history row.
* `payload`: an event payload's kept keys (the privacy filter).
* `session`: the job's connection options and session settings, retryable errors, temporary tables,
  a transaction that rolls DDL back.

Every function takes the dialect's name (`connection.dialect.name`) or a connection.
"""
