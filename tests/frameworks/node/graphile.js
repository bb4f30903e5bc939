'use strict'
// Graphile Worker 0.17 (Node 20) or 0.18 (Node 22), driven as its users drive it:
//   node graphile.js migrate          install or migrate the schema (graphile_worker)
//   node graphile.js add '<json>'     addJob(task, payload, {queueName, runAt, maxAttempts}); prints the id
//   node graphile.js add-many '<json>'  addJobs() of `count` jobs of one task, keyed
//                                     "<prefix>-<i> <suffix>", with maxAttempts; prints the count
//   node graphile.js worker           run a worker pool for the PGQ_TEST_QUEUES tasks until killed
//   node graphile.js once             run once (graphile-worker --once): the due jobs, then exit
// PGQ_TEST_CRONTAB (worker): a crontab in Graphile's format, given to run() as its `crontab` option.
//
// PGQ_TEST_GRAPHILE_PACKAGE picks the release: graphile-worker (0.17) or graphile-worker-18 (the npm
// alias of 0.18, an ES module: Node 22 requires it as one).
//
// A continuous pool (`worker`) clears every lock older than 4 hours, Graphile's lock expiry, once at a
// random moment in its first minute and then every 8-10 minutes (main.js, resetLocked); a run-once
// pool never does. It logs each RESET-LOCKED, so a test can tell what moved a lock it backdated.
const { EventEmitter } = require('events')
const { run, runOnce, makeWorkerUtils } = require(process.env.PGQ_TEST_GRAPHILE_PACKAGE || 'graphile-worker')
const pg = require('pg')
const { poolConfig, makeRecorder, perform, ready, queues } = require('./behaviour')

async function main () {
  const [command, arg] = process.argv.slice(2)
  const pgPool = new pg.Pool(poolConfig())
  if (command === 'migrate' || command === 'add' || command === 'add-many') {
    const utils = await makeWorkerUtils({ pgPool })
    if (command === 'migrate') {
      await utils.migrate()
    } else if (command === 'add-many') {
      const spec = JSON.parse(arg)
      const specs = Array.from({ length: spec.count }, (_, i) => ({
        identifier: spec.task,
        payload: { key: `${spec.prefix}-${i} ${spec.suffix}`, mode: spec.task },
        maxAttempts: spec.maxAttempts
      }))
      const jobs = await utils.addJobs(specs)
      process.stdout.write(`${jobs.length}\n`)
    } else {
      const spec = JSON.parse(arg)
      const runAt = spec.runInSeconds ? new Date(Date.now() + spec.runInSeconds * 1000) : undefined
      const job = await utils.addJob(spec.task, spec.payload, {
        queueName: spec.queueName,
        runAt,
        maxAttempts: spec.maxAttempts
      })
      process.stdout.write(`${job.id}\n`)
    }
    await utils.release()
    await pgPool.end()
    return
  }
  if (command === 'worker' || command === 'once') {
    const record = makeRecorder(pgPool)
    const task = (payload, helpers) => perform(payload, helpers.job.id, record)
    const events = new EventEmitter()
    events.on('resetLocked:success', ({ delay }) => log(`RESET-LOCKED done; next in ${delay} ms`))
    events.on('resetLocked:failure', ({ error, delay }) => log(`RESET-LOCKED failed (${error}); next in ${delay} ms`))
    const options = {
      pgPool,
      concurrency: 4,
      pollInterval: 200,
      events,
      taskList: Object.fromEntries(queues().map((name) => [name, task]))
    }
    if (process.env.PGQ_TEST_CRONTAB) options.crontab = process.env.PGQ_TEST_CRONTAB
    if (command === 'once') {
      const done = runOnce(options)
      ready()
      await done
      return
    }
    const runner = await run(options)
    ready()
    await runner.promise
    return
  }
  throw new Error(`unknown command ${command}`)
}

function log (line) {
  console.log(`${new Date().toISOString()} ${line}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
