'use strict'
// What every test job does, whichever framework runs it. Each run is recorded in pgq_test_runs
// (created by the Python harness), so a test can compare what the framework really did with what
// pgq-top showed. PGQ_TEST_FIXED=1 is "the fix is deployed": the slow job no longer hangs and the
// failing job succeeds, so a retried or rescued job can run to completion on a fresh worker.
const pg = require('pg')

function poolConfig () {
  // host, port, user, password, database: taken apart by the harness from the test's libpq DSN.
  return JSON.parse(process.env.PGQ_TEST_PG)
}

function makeRecorder (pool) {
  return (key, jobId, phase) => pool.query(
    'INSERT INTO pgq_test_runs (job_key, job_id, phase, pid) VALUES ($1, $2, $3, $4)',
    [key, String(jobId), phase, process.pid]
  )
}

async function perform (payload, jobId, record) {
  const fixed = process.env.PGQ_TEST_FIXED === '1'
  await record(payload.key, jobId, 'start')
  if ((payload.mode === 'slow' && !fixed) || payload.mode === 'hold') {
    await new Promise((resolve) => setTimeout(resolve, 3600 * 1000))
  }
  if (payload.mode === 'fail' && !fixed) {
    await record(payload.key, jobId, 'fail')
    throw new Error(`always fails: ${payload.key}`)
  }
  await record(payload.key, jobId, 'done')
}

// One line on stdout that the harness waits for before it enqueues. PGQ_TEST_LIFETIME_S bounds a
// worker's life, so one left behind by an interrupted test run exits by itself.
function ready () {
  const lifetime = Number(process.env.PGQ_TEST_LIFETIME_S || 0)
  if (lifetime > 0) setTimeout(() => process.exit(0), lifetime * 1000).unref()
  process.stdout.write(`READY ${process.pid}\n`)
}

// The queues (task identifiers) this worker serves: PGQ_TEST_QUEUES, comma-separated.
function queues () {
  return (process.env.PGQ_TEST_QUEUES || 'fast,slow,fail,later,hold').split(',')
}

module.exports = { poolConfig, makeRecorder, perform, ready, queues }
