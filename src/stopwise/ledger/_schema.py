"""The ledger's tables, declared once through SQLAlchemy Core for SQLite and PostgreSQL.

=================  ==========================================================================
table              what it holds
=================  ==========================================================================
schema_version     one row: the schema version this database was created with
evaluations        one row per registered evaluation: policy (canonical JSON + sha256), planned
                   task universe (JSON + sha256), the tested and baseline systems, the digest
                   that starts its decision chain, the UTC registration time
outcomes           append-only outcome events, unique on (evaluation, system, task, attempt);
                   every field of the outcome-row contract (flags canonical: sorted tokens
                   joined by ";", "" for none), a content digest, an increasing
                   sequence number (a decision at high-water mark m saw exactly the events with
                   sequence <= m) and the UTC time it was received
conflicts          events refused because their key was already stored with different content;
                   kept (once per distinct content) and never applied
decisions          the decision chain: per evaluation a sequence 1, 2, ..., the outcome sequence
                   high-water mark the decision was taken at, the record as canonical JSON, the
                   previous digest and digest = sha256(previous digest + canonical record JSON)
notices            the live workers' states, append-only: per evaluation (by name, so a worker
                   that fails before registration is recorded too) and system, ``started``,
                   ``failed`` (with the reason) or ``finished``; the latest notice of a system
                   is its state. Not part of the decision chain (it changes no decision); a
                   version 2 ledger gains this table when a stopwise that knows it opens it
=================  ==========================================================================

Nothing is ever updated or deleted by stopwise: the ledger only grows.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

__all__ = [
    "SCHEMA_VERSION",
    "conflicts",
    "decisions",
    "evaluations",
    "metadata",
    "notices",
    "outcomes",
    "schema_version",
]

SCHEMA_VERSION = 2
"""Version of the table layout below; a database of another version is refused, never migrated silently.

Version 2 added ``stopwise_outcomes.flags``; version 1 ledgers (no flags column) are refused with
a message on how to carry their events over."""

metadata = MetaData()

# BIGINT on PostgreSQL, INTEGER (the rowid alias that autoincrements) on SQLite.
_Id = BigInteger().with_variant(Integer(), "sqlite")

schema_version = Table(
    "stopwise_schema_version",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("created_at", String(40), nullable=False),
)

evaluations = Table(
    "stopwise_evaluations",
    metadata,
    Column("id", _Id, primary_key=True, autoincrement=True),
    Column("name", Text, nullable=False, unique=True),
    Column("policy_json", Text, nullable=False),
    Column("policy_sha256", String(64), nullable=False),
    Column("universe_json", Text, nullable=False),
    Column("universe_sha256", String(64), nullable=False),
    Column("tested", Text, nullable=False),
    Column("baseline", Text, nullable=False),
    Column("genesis_digest", String(64), nullable=False),
    Column("created_at", String(40), nullable=False),
    sqlite_autoincrement=True,
)


def _evaluation_events(name: str, id_column: str, *columns: Column, key: tuple[str, ...]) -> Table:
    """An append-only table of one evaluation's events.

    An increasing id, the evaluation, the columns, unique on (evaluation, *key) as constraint ``<name>_key``.
    """
    return Table(
        name,
        metadata,
        Column(id_column, _Id, primary_key=True, autoincrement=True),
        Column("evaluation_id", _Id, ForeignKey("stopwise_evaluations.id"), nullable=False),
        *columns,
        UniqueConstraint("evaluation_id", *key, name=f"{name}_key"),
        sqlite_autoincrement=True,
    )


outcomes = _evaluation_events(
    "stopwise_outcomes",
    "seq",
    Column("system", Text, nullable=False),
    Column("task", Text, nullable=False),
    Column("attempt", BigInteger, nullable=False),
    Column("outcome", Float(53), nullable=True),
    Column("task_group", Text, nullable=False),
    Column("cost_usd", Float(53), nullable=True),
    Column("elapsed_s", Float(53), nullable=True),
    Column("status", String(16), nullable=False),
    Column("source", Text, nullable=False),
    Column("unit", Text, nullable=False),
    Column("flags", Text, nullable=False, server_default=""),
    Column("digest", String(64), nullable=False),
    Column("received_at", String(40), nullable=False),
    key=("system", "task", "attempt"),
)

conflicts = _evaluation_events(
    "stopwise_conflicts",
    "id",
    Column("system", Text, nullable=False),
    Column("task", Text, nullable=False),
    Column("attempt", BigInteger, nullable=False),
    Column("row_json", Text, nullable=False),
    Column("digest", String(64), nullable=False),
    Column("stored_digest", String(64), nullable=False),
    Column("received_at", String(40), nullable=False),
    key=("system", "task", "attempt", "digest"),
)

decisions = _evaluation_events(
    "stopwise_decisions",
    "id",
    Column("sequence", BigInteger, nullable=False),
    Column("outcome_seq", BigInteger, nullable=False),
    Column("record_json", Text, nullable=False),
    Column("previous_digest", String(64), nullable=False),
    Column("digest", String(64), nullable=False),
    Column("created_at", String(40), nullable=False),
    key=("sequence",),
)

notices = Table(
    "stopwise_notices",
    metadata,
    Column("id", _Id, primary_key=True, autoincrement=True),
    Column("evaluation", Text, nullable=False, index=True),
    Column("system", Text, nullable=False),
    Column("state", String(16), nullable=False),
    Column("message", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
    sqlite_autoincrement=True,
)
