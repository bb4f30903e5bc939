// River, driven as its users drive it, for pgq-top's tests (tests/frameworks/river_client.py):
//
//	river-test migrate [N]        River's own migrator (rivermigrate), up to version N (default: all)
//	river-test insert '<json>'    Client.Insert of one job (queue, key, mode, max_attempts,
//	                              scheduled_in_s); prints its id
//	river-test insert-many '<json>'  Client.InsertMany of `count` jobs of one queue, keyed
//	                              "<prefix>-<i> <suffix>" (queue, prefix, suffix, count,
//	                              max_attempts); prints how many it inserted
//	river-test work               a real River client working the PGQ_TEST_QUEUES queues until killed
//
// The database is PGQ_TEST_DSN (a libpq conninfo string, read by pgx), the schema PGQ_TEST_SCHEMA
// (River's Schema option; default: the search path). Every run is recorded in public.pgq_test_runs,
// as the Node and Python test workers do: PGQ_TEST_FIXED=1 is "the fix is deployed" (the slow job no
// longer hangs, the failing job succeeds); a job of queue `hold` always hangs. PGQ_TEST_LIFETIME_S
// bounds a worker's life.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
)

// TestArgs is the one job kind the tests use; the queue says what the job does.
type TestArgs struct {
	Key  string `json:"key"`
	Mode string `json:"mode"`
}

func (TestArgs) Kind() string { return "pgq_test" }

type TestWorker struct {
	river.WorkerDefaults[TestArgs]
	db    *sql.DB
	fixed bool
}

func (w *TestWorker) record(ctx context.Context, key string, id int64, phase string) error {
	_, err := w.db.ExecContext(context.WithoutCancel(ctx),
		"INSERT INTO public.pgq_test_runs (job_key, job_id, phase, pid) VALUES ($1, $2, $3, $4)",
		key, strconv.FormatInt(id, 10), phase, os.Getpid())
	return err
}

func (w *TestWorker) Work(ctx context.Context, job *river.Job[TestArgs]) error {
	args := job.Args
	if err := w.record(ctx, args.Key, job.ID, "start"); err != nil {
		return err
	}
	if (args.Mode == "slow" && !w.fixed) || args.Mode == "hold" {
		select {
		case <-time.After(time.Hour):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if args.Mode == "fail" && !w.fixed {
		if err := w.record(ctx, args.Key, job.ID, "fail"); err != nil {
			return err
		}
		return fmt.Errorf("always fails: %s", args.Key)
	}
	return w.record(ctx, args.Key, job.ID, "done")
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(argv []string) error {
	if len(argv) == 0 {
		return errors.New("usage: river-test migrate [N] | insert JSON | work")
	}
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("PGQ_TEST_DSN"))
	if err != nil {
		return err
	}
	defer db.Close()
	driver := riverdatabasesql.New(db)
	schema := os.Getenv("PGQ_TEST_SCHEMA")
	switch argv[0] {
	case "migrate":
		migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema})
		if err != nil {
			return err
		}
		opts := &rivermigrate.MigrateOpts{}
		if len(argv) > 1 {
			if opts.TargetVersion, err = strconv.Atoi(argv[1]); err != nil {
				return err
			}
		}
		res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, opts)
		if err != nil {
			return err
		}
		for _, v := range res.Versions {
			fmt.Println(v.Version)
		}
		return nil
	case "insert":
		var spec struct {
			Queue        string `json:"queue"`
			Key          string `json:"key"`
			MaxAttempts  int    `json:"max_attempts"`
			ScheduledInS int    `json:"scheduled_in_s"`
		}
		if len(argv) < 2 {
			return errors.New("insert needs a JSON spec")
		}
		if err := json.Unmarshal([]byte(argv[1]), &spec); err != nil {
			return err
		}
		client, err := river.NewClient(driver, &river.Config{Schema: schema})
		if err != nil {
			return err
		}
		opts := &river.InsertOpts{Queue: spec.Queue, MaxAttempts: spec.MaxAttempts}
		if spec.ScheduledInS > 0 {
			opts.ScheduledAt = time.Now().Add(time.Duration(spec.ScheduledInS) * time.Second)
		}
		res, err := client.Insert(ctx, TestArgs{Key: spec.Key, Mode: spec.Queue}, opts)
		if err != nil {
			return err
		}
		fmt.Println(res.Job.ID)
		return nil
	case "insert-many":
		var spec struct {
			Queue       string `json:"queue"`
			Prefix      string `json:"prefix"`
			Suffix      string `json:"suffix"`
			Count       int    `json:"count"`
			MaxAttempts int    `json:"max_attempts"`
		}
		if len(argv) < 2 {
			return errors.New("insert-many needs a JSON spec")
		}
		if err := json.Unmarshal([]byte(argv[1]), &spec); err != nil {
			return err
		}
		client, err := river.NewClient(driver, &river.Config{Schema: schema})
		if err != nil {
			return err
		}
		params := make([]river.InsertManyParams, spec.Count)
		for i := range params {
			key := fmt.Sprintf("%s-%d %s", spec.Prefix, i, spec.Suffix)
			params[i] = river.InsertManyParams{
				Args:       TestArgs{Key: key, Mode: spec.Queue},
				InsertOpts: &river.InsertOpts{Queue: spec.Queue, MaxAttempts: spec.MaxAttempts},
			}
		}
		res, err := client.InsertMany(ctx, params)
		if err != nil {
			return err
		}
		fmt.Println(len(res))
		return nil
	case "work":
		return work(ctx, db, driver, schema)
	}
	return fmt.Errorf("unknown command %q", argv[0])
}

func work(ctx context.Context, db *sql.DB, driver *riverdatabasesql.Driver, schema string) error {
	workers := river.NewWorkers()
	river.AddWorker(workers, &TestWorker{db: db, fixed: os.Getenv("PGQ_TEST_FIXED") == "1"})
	queues := map[string]river.QueueConfig{}
	names := os.Getenv("PGQ_TEST_QUEUES")
	if names == "" {
		names = "fast,slow,fail,later,hold"
	}
	for _, name := range strings.Split(names, ",") {
		queues[name] = river.QueueConfig{MaxWorkers: 4}
	}
	client, err := river.NewClient(driver, &river.Config{
		Schema:            schema,
		Queues:            queues,
		Workers:           workers,
		FetchPollInterval: 200 * time.Millisecond,
		// No job timeout: the slow and held jobs hang until the process is killed. River's rescuer
		// (the leader's JobRescuer) is pushed far out: the tests rescue stuck jobs with pgq-top, and
		// pgq-top reads River's default horizon (1 h), which the test reaches by backdating.
		JobTimeout:           -1,
		RescueStuckJobsAfter: 1000 * time.Hour,
	})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	if lifetime, _ := strconv.ParseFloat(os.Getenv("PGQ_TEST_LIFETIME_S"), 64); lifetime > 0 {
		time.AfterFunc(time.Duration(lifetime*float64(time.Second)), func() { os.Exit(0) })
	}
	fmt.Printf("READY %d\n", os.Getpid())
	<-client.Stopped()
	return nil
}
