'use strict'
// pg-boss 10, 11 or 12, driven as its users drive it:
//   node pgboss.js migrate                   start() creates the schema; createQueue for each queue
//   node pgboss.js send '<json>'             send(queue, data, options); prints the id
//   node pgboss.js insert '<json>'           insert() of `count` jobs of one queue, keyed
//                                            "<prefix>-<i> <suffix>", with retryLimit (and startAfter,
//                                            seconds, when given); prints the count
//   node pgboss.js worker                    one work() loop per PGQ_TEST_QUEUES queue until killed
//   node pgboss.js cron '<json>'             schedule(name, cron, data, { tz }) with the cron pass on
//                                            (its monitor and worker every second), a work() loop on
//                                            the schedule's queue, until killed
//   node pgboss.js fleet '<json>'            a live fleet for a benchmark: one work() loop per `serve`
//                                            queue (batchSize `batch`, every `interval` s, completing
//                                            each job at once), and insert() of `rate` jobs a second
//                                            round the `enqueue` queues; no supervisor (it would fail
//                                            the jobs a benchmark makes stuck); a JSON line of counts
//                                            every second; exits after PGQ_TEST_LIFETIME_S
//   node pgboss.js monitor ['<json>']       pg-boss's own monitor (a supervising instance, every
//                                            `interval` s, 1 by default) until it has counted every
//                                            queue; prints each queue's monitor_on as JSON, then
//                                            stops, or with `keep` runs on until killed
//   node pgboss.js crash '<json>'            a worker that crashes: insert() of `count` jobs into
//                                            `queue` (expireInSeconds `expire`, priority 1 so they are
//                                            fetched first), fetch() of them, then exit without
//                                            completing them; prints their ids as JSON
// PGQ_TEST_SCHEMA names the schema (pg-boss's `schema` option; default pgboss).
// PGQ_TEST_PGBOSS_PACKAGE picks the release: pg-boss (10.x, Node 20), pg-boss-11 or pg-boss-12 (npm
// aliases; both need Node 22, which the harness runs them on). 12's module is ESM with a named export.
// PGQ_TEST_HEARTBEAT_REFRESH_S (12.x): how often a worker refreshes heartbeat_on of a job sent with
// heartbeatSeconds (pg-boss's own default is half of it).
// PGQ_TEST_BATCH=N (worker): fetch N jobs at a time (pg-boss waits pollingIntervalSeconds between
// fetches, so one job a fetch runs two a second).
// PGQ_TEST_SUPERVISE=0 turns off pg-boss's own maintenance (which would fail an expired active job
// by timeout): the test wants to see that job stuck, then rescue it itself.
const loaded = require(process.env.PGQ_TEST_PGBOSS_PACKAGE || 'pg-boss')
const PgBoss = loaded.PgBoss || loaded
const pg = require('pg')
const { poolConfig, makeRecorder, perform, ready, queues } = require('./behaviour')

function makeBoss (extra) {
  const options = { ...poolConfig(), ...extra }
  if (process.env.PGQ_TEST_SCHEMA) options.schema = process.env.PGQ_TEST_SCHEMA
  const boss = new PgBoss(options)
  boss.on('error', (err) => console.error(err))
  return boss
}

async function main () {
  const [command, arg] = process.argv.slice(2)
  if (command === 'migrate') {
    const boss = makeBoss({ supervise: false, schedule: false })
    await boss.start()
    for (const name of queues()) await boss.createQueue(name)
    await boss.stop({ graceful: false, wait: true })
    return
  }
  if (command === 'send') {
    const spec = JSON.parse(arg)
    const boss = makeBoss({ supervise: false, schedule: false, migrate: false })
    await boss.start()
    const id = await boss.send(spec.queue, spec.data, spec.options || {})
    process.stdout.write(`${id}\n`)
    await boss.stop({ graceful: false, wait: true })
    return
  }
  if (command === 'insert') {
    const spec = JSON.parse(arg)
    const boss = makeBoss({ supervise: false, schedule: false, migrate: false })
    await boss.start()
    const jobs = Array.from({ length: spec.count }, (_, i) => ({
      data: { key: `${spec.prefix}-${i} ${spec.suffix}`, mode: spec.queue },
      retryLimit: spec.retryLimit,
      ...(spec.startAfter ? { startAfter: spec.startAfter } : {})
    }))
    // pg-boss 10's insert(jobs) names each job's queue; 11 and 12 take insert(name, jobs)
    if (boss.insert.length >= 2) await boss.insert(spec.queue, jobs)
    else await boss.insert(jobs.map((job) => ({ name: spec.queue, ...job })))
    process.stdout.write(`${jobs.length}\n`)
    await boss.stop({ graceful: false, wait: true })
    return
  }
  if (command === 'worker') {
    const boss = makeBoss({ supervise: process.env.PGQ_TEST_SUPERVISE !== '0', schedule: false })
    await boss.start()
    const pool = new pg.Pool(poolConfig())
    const record = makeRecorder(pool)
    for (const name of queues()) {
      const options = { pollingIntervalSeconds: 0.5 }
      if (process.env.PGQ_TEST_HEARTBEAT_REFRESH_S) {
        options.heartbeatRefreshSeconds = Number(process.env.PGQ_TEST_HEARTBEAT_REFRESH_S)
      }
      if (process.env.PGQ_TEST_BATCH) {
        // A batching app: batchSize jobs per fetch, each failure failed by itself (boss.fail, as a
        // throwing handler is), so each job keeps its own error; pg-boss completes the rest.
        options.batchSize = Number(process.env.PGQ_TEST_BATCH)
        await boss.work(name, options, async (jobs) => {
          for (const job of jobs) {
            try {
              await perform(job.data, job.id, record)
            } catch (err) {
              await boss.fail(name, job.id, err)
            }
          }
        })
        continue
      }
      await boss.work(name, options, async (jobs) => {
        for (const job of jobs) await perform(job.data, job.id, record)
      })
    }
    ready()
    return
  }
  if (command === 'fleet') {
    const spec = JSON.parse(arg)
    const boss = makeBoss({ supervise: false, schedule: false, migrate: false })
    await boss.start()
    const counts = { completed: 0, enqueued: 0, errors: 0 }
    for (const name of spec.serve) {
      await boss.work(name, { pollingIntervalSeconds: spec.interval, batchSize: spec.batch }, async (jobs) => {
        counts.completed += jobs.length // pg-boss completes the batch once the handler returns
      })
    }
    const tick = 0.1 // seconds between inserts, each into the next queue
    let turn = 0
    let owed = 0
    setInterval(() => {
      owed += spec.rate * tick
      const count = Math.floor(owed)
      if (count < 1) return
      owed -= count
      const name = spec.enqueue[turn++ % spec.enqueue.length]
      const jobs = Array.from({ length: count }, () => ({ data: {} }))
      boss.insert(name, jobs).then(() => { counts.enqueued += count }, () => { counts.errors += 1 })
    }, tick * 1000)
    setInterval(() => process.stdout.write(`${JSON.stringify({ ...counts, at: Date.now() })}\n`), 1000)
    ready()
    return
  }
  if (command === 'crash') {
    const spec = JSON.parse(arg)
    const boss = makeBoss({ supervise: false, schedule: false, migrate: false })
    await boss.start()
    const jobs = Array.from({ length: spec.count }, (_, i) => ({
      data: { crash: i }, expireInSeconds: spec.expire, priority: 1
    }))
    await boss.insert(spec.queue, jobs)
    const fetched = await boss.fetch(spec.queue, { batchSize: spec.count })
    process.stdout.write(`${JSON.stringify(fetched.map((job) => job.id))}\n`)
    process.exit(0) // the crash: no complete(), no stop()
  }
  if (command === 'cron') {
    const spec = JSON.parse(arg)
    const boss = makeBoss({
      supervise: true, schedule: true, cronMonitorIntervalSeconds: 1, cronWorkerIntervalSeconds: 1
    })
    await boss.start()
    await boss.createQueue(spec.name)
    await boss.schedule(spec.name, spec.cron, { from: 'schedule' }, { tz: spec.tz || 'UTC' })
    await boss.work(spec.name, { pollingIntervalSeconds: 0.5 }, async () => {})
    ready()
    return
  }
  if (command === 'monitor') {
    // pg-boss's own monitor as a supervising instance runs it (every `interval` s, 1 by default),
    // until it has counted every queue since this command started; prints the queues' monitor_on as
    // JSON, then stops, or with `keep` goes on until killed
    const spec = JSON.parse(arg || '{}')
    const interval = spec.interval || 1
    const boss = makeBoss({
      supervise: true, schedule: false, migrate: false, monitorIntervalSeconds: interval, superviseIntervalSeconds: interval
    })
    const pool = new pg.Pool(poolConfig())
    const schema = process.env.PGQ_TEST_SCHEMA || 'pgboss'
    const since = (await pool.query('SELECT now() AS t')).rows[0].t
    await boss.start()
    const deadline = Date.now() + 30000 + interval * 2000
    for (;;) {
      const { rows } = await pool.query(
        `SELECT name, monitor_on FROM ${schema}.queue WHERE name NOT LIKE '\\_\\_pgboss\\_\\_%'`
      )
      if (rows.length && rows.every((r) => r.monitor_on && r.monitor_on > since)) {
        process.stdout.write(`${JSON.stringify(rows)}\n`)
        break
      }
      if (Date.now() > deadline) throw new Error('pg-boss\'s monitor did not count every queue in time')
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    if (spec.keep) return
    await boss.stop({ graceful: false, wait: true })
    await pool.end()
    return
  }
  throw new Error(`unknown command ${command}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
