package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/dynabench-go/dynabench"
)

// step is one vote on an example and what must follow.
type step struct {
	who, label, mode string
	wantCode         string // error code; "" for success
	wantStatus       string // the example's status afterwards ("" = unchanged check skipped)
}

func v(who, label string) step { return step{who: who, label: label} }

func (s step) is(status string) step { s.wantStatus = status; return s }

func (s step) fails(code string) step { s.wantCode = code; return s }

func owner(label string) step { return step{who: "admin", label: label, mode: "owner"} }

// TestValidationSequences runs votes on fresh examples and checks the status after every vote and
// the round's counters after each sequence.
func TestValidationSequences(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, says(label("positive")))
		pending, verified, rejected, retracted := dynabench.StatusPending, dynabench.StatusVerified, dynabench.StatusRejected, dynabench.StatusRetracted
		for _, tc := range []struct {
			name    string
			fooled  bool
			steps   []step
			retract bool
			// the sequence's effect on round 1: the example itself (collected, fooled) plus its resolution
			want dynabench.StatsDelta
		}{
			{name: "three correct", fooled: true,
				steps: []step{v("bob", "correct").is(pending), v("carol", "correct").is(pending), v("dave", "correct").is(verified)},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1, VerifiedFooled: 1}},
			{name: "three incorrect", fooled: true,
				steps: []step{v("bob", "incorrect"), v("carol", "incorrect").is(pending), v("dave", "incorrect").is(rejected)},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1, Rejected: 1}},
			{name: "three flagged", fooled: true,
				steps: []step{v("bob", "flagged"), v("carol", "flagged"), v("dave", "flagged").is(rejected)},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1, Rejected: 1}},
			{name: "mixed votes until three agree", fooled: true,
				steps: []step{v("bob", "correct"), v("carol", "incorrect"), v("dave", "flagged").is(pending), v("erin", "incorrect").is(pending),
					v("frank", "correct").is(pending), v("gina", "correct").is(verified)},
				want: dynabench.StatsDelta{Collected: 1, Fooled: 1, VerifiedFooled: 1}},
			{name: "not fooling, verified", fooled: false,
				steps: []step{v("bob", "correct"), v("carol", "correct"), v("dave", "correct").is(verified)},
				want:  dynabench.StatsDelta{Collected: 1}},
			{name: "not fooling, rejected", fooled: false,
				steps: []step{v("bob", "incorrect"), v("carol", "incorrect"), v("dave", "incorrect").is(rejected)},
				want:  dynabench.StatsDelta{Collected: 1, Rejected: 1}},
			{name: "own example", fooled: true,
				steps: []step{v("alice", "correct").fails(dynabench.EFORBIDDEN).is(pending)},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1}},
			{name: "twice", fooled: true,
				steps: []step{v("bob", "correct"), v("bob", "incorrect").fails(dynabench.ECONFLICT).is(pending)},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1}},
			{name: "after resolution", fooled: true,
				steps: []step{v("bob", "correct"), v("carol", "correct"), v("dave", "correct"), v("erin", "incorrect").fails(dynabench.ECONFLICT).is(verified)},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1, VerifiedFooled: 1}},
			{name: "bad label", fooled: true, steps: []step{v("bob", "maybe").fails(dynabench.EINVALID).is(pending)},
				want: dynabench.StatsDelta{Collected: 1, Fooled: 1}},
			{name: "bad mode", fooled: true, steps: []step{{who: "bob", label: "correct", mode: "boss", wantCode: dynabench.EINVALID}},
				want: dynabench.StatsDelta{Collected: 1, Fooled: 1}},
			{name: "owner mode by a user", fooled: true,
				steps: []step{{who: "bob", label: "correct", mode: "owner", wantCode: dynabench.EFORBIDDEN, wantStatus: pending}},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1}},
			{name: "owner verifies at once", fooled: true, steps: []step{owner("correct").is(verified)},
				want: dynabench.StatsDelta{Collected: 1, Fooled: 1, VerifiedFooled: 1}},
			{name: "owner overturns users", fooled: true,
				steps: []step{v("bob", "correct"), v("carol", "correct"), v("dave", "correct").is(verified), owner("incorrect").is(rejected)},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1, Rejected: 1}},
			{name: "owner votes once per mode", fooled: true,
				steps: []step{owner("incorrect").is(rejected), owner("correct").fails(dynabench.ECONFLICT).is(rejected)},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1, Rejected: 1}},
			{name: "admin votes as a user too", fooled: true,
				steps: []step{{who: "admin", label: "correct", wantStatus: pending}, owner("flagged").is(rejected)},
				want:  dynabench.StatsDelta{Collected: 1, Fooled: 1, Rejected: 1}},
			{name: "retracted after verification", fooled: true, retract: true,
				steps: []step{v("bob", "correct"), v("carol", "correct"), v("dave", "correct").is(verified)},
				want:  dynabench.StatsDelta{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				before := f.stats(t)
				lbl := "positive"
				if tc.fooled {
					lbl = "negative"
				}
				e := f.create(t, "alice", 0, tc.name, lbl)
				for i, s := range tc.steps {
					actor := f.users[s.who]
					if s.who == "admin" {
						actor = f.admin
					}
					out, err := f.svc.Validate(ctx, actor, e.ID, NewValidation{Label: s.label, Mode: s.mode})
					if got := dynabench.ErrorCode(err); got != s.wantCode {
						t.Fatalf("vote %d (%s %s %s): error %v, want code %q", i, s.who, s.label, s.mode, err, s.wantCode)
					}
					if err == nil && out.ID != e.ID {
						t.Fatalf("vote %d answered example %d", i, out.ID)
					}
					stored, err := f.store.FindExampleByID(ctx, e.ID)
					if err != nil {
						t.Fatal(err)
					}
					if s.wantStatus != "" && stored.Status != s.wantStatus {
						t.Fatalf("after vote %d (%s %s %s): status %s, want %s", i, s.who, s.label, s.mode, stored.Status, s.wantStatus)
					}
				}
				if tc.retract {
					if _, err := f.svc.RetractExample(ctx, f.users["alice"], e.ID); err != nil {
						t.Fatal(err)
					}
					if stored, _ := f.store.FindExampleByID(ctx, e.ID); stored.Status != retracted {
						t.Fatalf("status %s after retraction", stored.Status)
					}
				}
				after := f.stats(t)
				got := dynabench.StatsDelta{Collected: after.Collected - before.Collected, Fooled: after.Fooled - before.Fooled,
					VerifiedFooled: after.VerifiedFooled - before.VerifiedFooled, Rejected: after.Rejected - before.Rejected}
				want := tc.want
				want.RejectedFooled = 0
				if got != want {
					t.Errorf("the round's counters moved by %+v, want %+v", got, want)
				}
				f.noDrift(t)
			})
		}
	})
}

// TestValidationQueue: what NextToValidate serves, and in which order.
func TestValidationQueue(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, says(label("positive")))
		ctx := context.Background()
		next := func(who string) int64 {
			t.Helper()
			e, c, err := f.svc.NextToValidate(ctx, f.users[who], "tk", 0)
			if dynabench.IsCode(err, dynabench.ENOTFOUND) {
				return 0
			} else if err != nil {
				t.Fatal(err)
			}
			if c == nil || c.ID != e.ContextID {
				t.Errorf("served context %v with example on %d", c, e.ContextID)
			}
			return e.ID
		}
		vote := func(who string, id int64, l string) {
			t.Helper()
			if _, err := f.svc.Validate(ctx, f.users[who], id, NewValidation{Label: l}); err != nil {
				t.Fatal(err)
			}
		}
		if got := next("bob"); got != 0 {
			t.Fatalf("served %d from an empty queue", got)
		}
		plain := f.create(t, "alice", 0, "plain", "positive")
		a := f.create(t, "alice", 1, "A", "negative")
		b := f.create(t, "carol", 2, "B", "neutral")
		if got := next("alice"); got != b.ID {
			t.Errorf("alice served %d, want carol's %d (never her own)", got, b.ID)
		}
		if got := next("bob"); got != a.ID {
			t.Errorf("bob served %d, want the oldest fooling example %d", got, a.ID)
		}
		vote("dave", a.ID, "correct")
		if got := next("bob"); got != b.ID {
			t.Errorf("bob served %d, want %d (fewest votes first)", got, b.ID)
		}
		vote("bob", b.ID, "correct")
		vote("bob", a.ID, "incorrect")
		if got := next("bob"); got != 0 {
			t.Errorf("bob served %d after voting on every fooling example (plain %d does not fool)", got, plain.ID)
		}
		vote("erin", a.ID, "flagged")
		// A has one vote of each kind: unresolved, so still due for those who have not voted.
		if got := next("frank"); got != a.ID && got != b.ID {
			t.Errorf("frank served %d", got)
		}
		vote("frank", a.ID, "correct")
		vote("gina", a.ID, "correct")
		if s, _ := f.store.FindExampleByID(ctx, a.ID); s.Status != dynabench.StatusVerified {
			t.Errorf("A is %s after three correct among five votes", s.Status)
		}
		if got := next("carol"); got != 0 {
			t.Errorf("carol served %d, want none (A verified, B her own, the plain one does not fool)", got)
		}
		// Retracted examples leave the queue.
		if _, err := f.svc.RetractExample(ctx, f.users["carol"], b.ID); err != nil {
			t.Fatal(err)
		}
		if got := next("dave"); got != 0 {
			t.Errorf("dave served %d, want none (B retracted, A resolved)", got)
		}
		f.wantStats(t, 2, 1, 1, 0)
	})
}

// TestConcurrentVotes: many validators vote on the same examples at once. Exactly N votes of a kind
// resolve an example; no vote is lost or counted twice.
func TestConcurrentVotes(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, says(label("positive")))
		ctx := context.Background()
		voters := []string{"bob", "carol", "dave", "erin", "frank", "gina"}
		const examples = 15
		var verifiedN, rejectedN int64
		for i := range examples {
			e := f.create(t, "alice", i%3, fmt.Sprint("race ", i), "negative")
			var wg sync.WaitGroup
			var mu sync.Mutex
			accepted := map[string]int{}
			for j, who := range voters {
				l := "correct"
				if (i+j)%2 == 1 {
					l = "incorrect"
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := f.svc.Validate(ctx, f.users[who], e.ID, NewValidation{Label: l})
					var de *dynabench.Error
					switch {
					case err == nil:
						mu.Lock()
						accepted[l]++
						mu.Unlock()
					case errors.As(err, &de) && de.Code == dynabench.ECONFLICT:
					default:
						t.Errorf("vote: %v", err)
					}
				}()
			}
			wg.Wait()
			stored, err := f.store.FindExampleByID(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			// Three of each label were sent; whichever label reached three first decided.
			switch stored.Status {
			case dynabench.StatusVerified:
				verifiedN++
				if accepted["correct"] != 3 || accepted["incorrect"] > 2 {
					t.Errorf("example %d verified with %v accepted", i, accepted)
				}
			case dynabench.StatusRejected:
				rejectedN++
				if accepted["incorrect"] != 3 || accepted["correct"] > 2 {
					t.Errorf("example %d rejected with %v accepted", i, accepted)
				}
			default:
				t.Errorf("example %d is %s after six votes", i, stored.Status)
			}
			if stored.Counts.Correct != accepted["correct"] || stored.Counts.Incorrect != accepted["incorrect"] {
				t.Errorf("example %d counts %+v, accepted %v", i, stored.Counts, accepted)
			}
		}
		f.wantStats(t, examples, examples, verifiedN, rejectedN)
	})
}
