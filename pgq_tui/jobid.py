"""A job's id, whatever the framework: the one type the dialect contract, the Snapshot and the actions
share (a module of its own, so the pure Snapshot does not import psycopg through the contract)."""

from __future__ import annotations

from uuid import UUID

# Most frameworks use bigint ids; pg-boss's uuids are read as text (`id::text`) and pgmq's as
# "queue:msg_id", but a mapped table's uuid id column arrives as a UUID.
JobId = int | str | UUID
