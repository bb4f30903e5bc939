"""AsyncJobQueue under concurrency: asyncio tasks, each with its own connection, drain a queue.
(Its contract, method by method, is tests/test_queue_core.py, run on both APIs.)"""

from __future__ import annotations

import asyncio

import psycopg

from pgq_tui.queue import AsyncJobQueue

JOBS = 10_000
TASKS = 4


async def test_async_api_drains_ten_thousand_jobs_exactly_once_with_four_tasks(
    dsn: str, sql: psycopg.Connection
) -> None:
    async with AsyncJobQueue(dsn) as producer:
        ids = await producer.enqueue("a", [{"n": i} for i in range(JOBS)])
    claimed: dict[int, list[int]] = {task: [] for task in range(TASKS)}

    async def work(task: int) -> None:
        async with AsyncJobQueue(dsn) as q:
            while jobs := await q.claim("a", limit=10, lease=30):
                claimed[task].extend(j.id for j in jobs)
                assert await q.complete(jobs) == len(jobs)

    await asyncio.gather(*(work(task) for task in range(TASKS)))
    everything = [i for ids_ in claimed.values() for i in ids_]
    assert sorted(everything) == ids, "a job was claimed twice or never"
    assert all(claimed.values()), "a task never got a job: they did not run concurrently"
    assert sql.execute("SELECT count(*) FROM jobs").fetchone()[0] == 0
    assert sql.execute("SELECT sum(completed) FROM jobs_stats").fetchone()[0] == JOBS
