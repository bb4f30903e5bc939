'use strict'
// Graphile Worker 0.17, driven as its users drive it:
//   node graphile.js migrate          install or migrate the schema (graphile_worker)
//   node graphile.js add '<json>'     addJob(task, payload, {queueName, runAt, maxAttempts}); prints the id
//   node graphile.js worker           run a worker pool for the PGQ_TEST_QUEUES tasks until killed
const { run, makeWorkerUtils } = require('graphile-worker')
const pg = require('pg')
const { poolConfig, makeRecorder, perform, ready, queues } = require('./behaviour')

async function main () {
  const [command, arg] = process.argv.slice(2)
  const pgPool = new pg.Pool(poolConfig())
  if (command === 'migrate' || command === 'add') {
    const utils = await makeWorkerUtils({ pgPool })
    if (command === 'migrate') {
      await utils.migrate()
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
  if (command === 'worker') {
    const record = makeRecorder(pgPool)
    const task = (payload, helpers) => perform(payload, helpers.job.id, record)
    const runner = await run({
      pgPool,
      concurrency: 4,
      pollInterval: 200,
      taskList: Object.fromEntries(queues().map((name) => [name, task]))
    })
    ready()
    await runner.promise
    return
  }
  throw new Error(`unknown command ${command}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
