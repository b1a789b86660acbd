package sqlstore_test

import (
	"sync"
	"testing"
	"time"

	"github.com/dynabench-go/dynabench"
)

func TestDatasets(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u := e.user(t)
		tk := e.task(t)
		d := &dynabench.Dataset{TaskID: tk.ID, Name: "Test-A", Access: dynabench.AccessScoring, SHA256: "aa", Size: 2,
			Variants: map[string]int{"robustness": 1}, CreatedBy: u.ID}
		exs := []*dynabench.DatasetExample{
			{Idx: 0, UID: "1", Input: map[string]any{"text": "ünï ✓"}, Gold: []string{"positive"}, Tags: []string{"hard"}},
			{Idx: 1, UID: "2", Input: map[string]any{"text": "b"}, Gold: []string{"a", "b"}},
			{Variant: dynabench.VariantRobustness, Idx: 0, UID: "1__robustness_case", OriginalUID: "1", Perturbation: "case",
				Input: map[string]any{"text": "ÜNÏ ✓"}, Gold: []string{"positive"}},
		}
		must(t, s.InTx(ctx, func(tx dynabench.Store) error { return tx.SaveDataset(ctx, d, exs) }))
		wantEqual(t, "version", d.Version, 1)
		got, err := s.FindDatasetByName(ctx, tk.ID, "test-a")
		must(t, err)
		wantEqual(t, "dataset", got, &dynabench.Dataset{ID: d.ID, TaskID: tk.ID, Name: "Test-A", Access: "scoring", Version: 1,
			SHA256: "aa", Size: 2, Variants: map[string]int{"robustness": 1}, CreatedBy: u.ID, CreatedAt: millis(testNow), UpdatedAt: millis(testNow)})
		orig, err := s.FindDatasetExamples(ctx, d.ID, "")
		must(t, err)
		wantEqual(t, "examples", len(orig), 2)
		wantEqual(t, "example 0", orig[0], &dynabench.DatasetExample{DatasetID: d.ID, Idx: 0, UID: "1",
			Input: map[string]any{"text": "ünï ✓"}, Gold: []string{"positive"}, Tags: []string{"hard"}})
		wantEqual(t, "no tags", orig[1].Tags, []string{})
		rob, err := s.FindDatasetExamples(ctx, d.ID, dynabench.VariantRobustness)
		must(t, err)
		wantEqual(t, "perturbed", rob[0].OriginalUID+"/"+rob[0].Perturbation, "1/case")

		// Replacing by name (any case) bumps the version and swaps the examples.
		many := make([]*dynabench.DatasetExample, 450) // more than one multi-row INSERT
		for i := range many {
			many[i] = &dynabench.DatasetExample{Idx: i, UID: string(rune('a' + i%26)), Input: map[string]any{"text": "x"}, Gold: []string{"y"}}
		}
		d2 := &dynabench.Dataset{TaskID: tk.ID, Name: "TEST-a", Access: dynabench.AccessHidden, SHA256: "bb", Size: 450}
		must(t, s.InTx(ctx, func(tx dynabench.Store) error { return tx.SaveDataset(ctx, d2, many) }))
		wantEqual(t, "same id", d2.ID, d.ID)
		wantEqual(t, "version 2", d2.Version, 2)
		orig, err = s.FindDatasetExamples(ctx, d.ID, "")
		must(t, err)
		wantEqual(t, "replaced", len(orig), 450)
		rob, err = s.FindDatasetExamples(ctx, d.ID, dynabench.VariantRobustness)
		must(t, err)
		wantEqual(t, "old variant gone", len(rob), 0)
		all, err := s.FindDatasets(ctx, tk.ID)
		must(t, err)
		wantEqual(t, "list", len(all), 1)
		wantEqual(t, "kept name", all[0].Name, "Test-A")
		wantEqual(t, "access", all[0].Access, "hidden")

		must(t, s.DeleteDataset(ctx, d.ID))
		wantCode(t, s.DeleteDataset(ctx, d.ID), dynabench.ENOTFOUND)
		_, err = s.FindDatasetByID(ctx, d.ID)
		wantCode(t, err, dynabench.ENOTFOUND)
		wantEqual(t, "examples cascade", e.count(t, `SELECT count(*) FROM dataset_examples WHERE dataset_id = $1`, d.ID), int64(0))
	})
}

func TestEvaluations(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u := e.user(t)
		tk := e.task(t)
		m := e.model(t, tk.ID, u.ID)
		d := &dynabench.Dataset{TaskID: tk.ID, Name: "dev", Access: dynabench.AccessScoring, SHA256: "x"}
		must(t, s.SaveDataset(ctx, d, nil))
		v0, err := s.ScoresVersion(ctx, tk.ID)
		must(t, err)

		ev := &dynabench.Evaluation{ModelID: m.ID, DatasetID: d.ID, DatasetVersion: 1}
		must(t, s.QueueEvaluation(ctx, ev))
		wantEqual(t, "queued", ev.Status, dynabench.EvalQueued)
		mem := 0.5
		ev.Status, ev.Log = dynabench.EvalCompleted, "done\n"
		ev.Result = &dynabench.EvalResult{N: 2, Metrics: map[string]float64{"accuracy": 0.5}, Predictions: []string{"a", "b"},
			ExamplesPerSecond: 10, MemoryGiB: &mem}
		must(t, s.UpdateEvaluation(ctx, ev))
		got, err := s.FindEvaluation(ctx, ev.ID)
		must(t, err)
		wantEqual(t, "result", got.Result, ev.Result)
		v1, err := s.ScoresVersion(ctx, tk.ID)
		must(t, err)
		if v1 == v0 {
			t.Fatal("a completed evaluation must change the scores version")
		}

		// Queueing again (a new dataset version) resets the same row.
		again := &dynabench.Evaluation{ModelID: m.ID, DatasetID: d.ID, DatasetVersion: 2}
		must(t, s.QueueEvaluation(ctx, again))
		wantEqual(t, "same row", again.ID, ev.ID)
		wantEqual(t, "reset", []any{again.Status, again.DatasetVersion, again.Result == nil, again.Log}, []any{"queued", 2, true, ""})
		rob := &dynabench.Evaluation{ModelID: m.ID, DatasetID: d.ID, Variant: dynabench.VariantRobustness, DatasetVersion: 2}
		must(t, s.QueueEvaluation(ctx, rob))
		for _, f := range []dynabench.EvaluationFilter{{ModelID: m.ID}, {DatasetID: d.ID}, {TaskID: tk.ID}} {
			list, err := s.FindEvaluations(ctx, f)
			must(t, err)
			wantEqual(t, "listed", ids(list, func(e *dynabench.Evaluation) int64 { return e.ID }), []int64{ev.ID, rob.ID})
		}
		_, err = s.FindEvaluations(ctx, dynabench.EvaluationFilter{})
		wantCode(t, err, dynabench.EINVALID)
		wantCode(t, s.QueueEvaluation(ctx, &dynabench.Evaluation{ModelID: m.ID + 99, DatasetID: d.ID, DatasetVersion: 1}), dynabench.ENOTFOUND)

		must(t, s.SetModelPublished(ctx, m.ID, true))
		pub, err := s.FindModelByID(ctx, m.ID)
		must(t, err)
		wantEqual(t, "published", pub.Published, true)
		wantCode(t, s.SetModelPublished(ctx, m.ID+99, true), dynabench.ENOTFOUND)
	})
}

func TestJobs(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		var mu sync.Mutex
		now := testNow
		e.db.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		q := dynabench.JobQuery{Worker: "w1", Kinds: []string{"evaluate"}, Lease: 30 * time.Second}

		j := &dynabench.Job{Kind: "evaluate", IdempotencyKey: "eval:1", Payload: map[string]any{"evaluation_id": 1.0}, MaxAttempts: 2, UserID: 7}
		must(t, s.EnqueueJob(ctx, j))
		wantEqual(t, "queued", j.State, dynabench.JobQueued)
		dup := &dynabench.Job{Kind: "evaluate", IdempotencyKey: "eval:1"}
		must(t, s.EnqueueJob(ctx, dup))
		wantEqual(t, "idempotent", dup.ID, j.ID)
		_, err := s.LeaseJob(ctx, dynabench.JobQuery{Worker: "w1", Kinds: []string{"train"}, Lease: time.Second})
		wantCode(t, err, dynabench.ENOTFOUND)
		_, err = s.LeaseJob(ctx, dynabench.JobQuery{Worker: "w1", Kinds: []string{"evaluate"}, Lease: time.Second, UserID: 8})
		wantCode(t, err, dynabench.ENOTFOUND)

		l1, err := s.LeaseJob(ctx, q)
		must(t, err)
		wantEqual(t, "lease", []any{l1.ID, l1.State, l1.Attempts, l1.LeaseOwner}, []any{j.ID, "running", 1, "w1#1"})
		_, err = s.LeaseJob(ctx, q)
		wantCode(t, err, dynabench.ENOTFOUND) // leased, not expired
		must(t, s.HeartbeatJob(ctx, j.ID, l1.LeaseOwner, now.Add(time.Minute)))

		// The worker dies: after the lease expires, another worker takes the job over; the first
		// worker can neither heartbeat nor finish it any more.
		advance(2 * time.Minute)
		l2, err := s.LeaseJob(ctx, dynabench.JobQuery{Worker: "w2", Kinds: []string{"evaluate"}, Lease: 30 * time.Second})
		must(t, err)
		wantEqual(t, "taken over", []any{l2.ID, l2.Attempts, l2.LeaseOwner}, []any{j.ID, 2, "w2#2"})
		wantCode(t, s.HeartbeatJob(ctx, j.ID, l1.LeaseOwner, now.Add(time.Minute)), dynabench.ECONFLICT)
		wantCode(t, s.FinishJob(ctx, j.ID, l1.LeaseOwner, dynabench.JobDone, "", now), dynabench.ECONFLICT)
		must(t, s.FinishJob(ctx, j.ID, l2.LeaseOwner, dynabench.JobQueued, "timeout", now.Add(10*time.Second)))
		_, err = s.LeaseJob(ctx, q)
		wantCode(t, err, dynabench.ENOTFOUND) // backing off
		advance(11 * time.Second)
		l3, err := s.LeaseJob(ctx, q)
		must(t, err)
		wantEqual(t, "third attempt", l3.Attempts, 3)

		// A lease that expires on the last attempt parks the job instead of looping forever.
		advance(time.Minute)
		_, err = s.LeaseJob(ctx, q)
		wantCode(t, err, dynabench.ENOTFOUND)
		parked, err := s.FindJob(ctx, j.ID)
		must(t, err)
		wantEqual(t, "parked", parked.State, dynabench.JobParked)
		if parked.LastError == "" {
			t.Fatal("a parked job says why")
		}
		// Enqueueing a parked job again starts it over.
		re := &dynabench.Job{Kind: "evaluate", IdempotencyKey: "eval:1", MaxAttempts: 2}
		must(t, s.EnqueueJob(ctx, re))
		wantEqual(t, "requeued", []any{re.ID, re.State, re.Attempts, re.LastError}, []any{j.ID, "queued", 0, ""})
		l4, err := s.LeaseJob(ctx, q)
		must(t, err)
		must(t, s.FinishJob(ctx, j.ID, l4.LeaseOwner, dynabench.JobDone, "", now))
		byKey, err := s.FindJobByKey(ctx, "eval:1")
		must(t, err)
		wantEqual(t, "done", byKey.State, dynabench.JobDone)

		// Concurrent workers never lease the same job twice.
		for i := range 20 {
			must(t, s.EnqueueJob(ctx, &dynabench.Job{Kind: "evaluate", IdempotencyKey: "many:" + string(rune('a'+i))}))
		}
		var wg sync.WaitGroup
		seen := map[int64]int{}
		var smu sync.Mutex
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					l, err := s.LeaseJob(ctx, dynabench.JobQuery{Worker: "c" + string(rune('0'+w)), Kinds: []string{"evaluate"}, Lease: time.Hour})
					if dynabench.IsCode(err, dynabench.ENOTFOUND) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					smu.Lock()
					seen[l.ID]++
					smu.Unlock()
				}
			}()
		}
		wg.Wait()
		wantEqual(t, "leased jobs", len(seen), 20)
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("job %d leased %d times", id, n)
			}
		}
	})
}

func TestLeaderboardForksAndSnapshots(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u := e.user(t)
		tk := e.task(t)
		f := &dynabench.LeaderboardFork{TaskID: tk.ID, Slug: "fair-first", Name: "Fairness first", UserID: u.ID,
			MetricWeights: map[string]float64{"accuracy": 1, "fairness": 5}, DatasetWeights: map[string]float64{"dev": 2}}
		must(t, s.CreateLeaderboardFork(ctx, f))
		got, err := s.FindLeaderboardFork(ctx, "fair-first")
		must(t, err)
		want := *f
		want.CreatedAt = millis(testNow)
		wantEqual(t, "fork", got, &want)
		wantCode(t, s.CreateLeaderboardFork(ctx, &dynabench.LeaderboardFork{TaskID: tk.ID, Slug: "fair-first", UserID: u.ID}), dynabench.ECONFLICT)
		_, err = s.FindLeaderboardFork(ctx, "nope")
		wantCode(t, err, dynabench.ENOTFOUND)

		sn := &dynabench.LeaderboardSnapshot{TaskID: tk.ID, Slug: "s1", Name: "Before round 2", UserID: u.ID, Body: []byte(`{"rows":[]}`)}
		must(t, s.CreateLeaderboardSnapshot(ctx, sn))
		gs, err := s.FindLeaderboardSnapshot(ctx, "s1")
		must(t, err)
		wantEqual(t, "snapshot", []any{string(gs.Body), gs.Name, gs.CreatedAt}, []any{`{"rows":[]}`, "Before round 2", millis(testNow)})
	})
}

func TestReleases(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		s := e.s
		u := e.user(t)
		tk := e.task(t)
		secret, err := s.InstallSecret(ctx)
		must(t, err)
		again, err := s.InstallSecret(ctx)
		must(t, err)
		if len(secret) != 32 || string(secret) != string(again) {
			t.Fatalf("the install secret is created once and kept: %x vs %x", secret, again)
		}
		d := &dynabench.Dataset{TaskID: tk.ID, Name: "round-1-test", Access: dynabench.AccessScoring, SHA256: "x", RoundNumber: 1}
		must(t, s.SaveDataset(ctx, d, nil))
		r := &dynabench.Release{TaskID: tk.ID, RoundNumber: 1, Version: 1, DatasetID: d.ID, Dir: "/r/1", Manifest: []byte(`{"a":1}`),
			Datasheet: "# Sheet", Canary: "DYNABENCH CANARY GUID x", CreatedBy: u.ID}
		must(t, s.CreateRelease(ctx, r))
		wantCode(t, s.CreateRelease(ctx, &dynabench.Release{TaskID: tk.ID, RoundNumber: 1, Version: 1, Manifest: []byte(`{}`)}), dynabench.ECONFLICT)
		must(t, s.SetReleasePublic(ctx, r.ID, true))
		wantCode(t, s.SetReleasePublic(ctx, r.ID+99, true), dynabench.ENOTFOUND)
		list, err := s.FindReleases(ctx, tk.ID)
		must(t, err)
		want := *r
		want.Public, want.CreatedAt = true, millis(testNow)
		wantEqual(t, "releases", list, []*dynabench.Release{&want})
		// Deleting the dataset keeps the release (its files stand on their own).
		must(t, s.DeleteDataset(ctx, d.ID))
		list, err = s.FindReleases(ctx, tk.ID)
		must(t, err)
		wantEqual(t, "dataset gone", list[0].DatasetID, int64(0))
	})
}
