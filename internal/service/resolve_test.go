package service

import (
	"testing"

	"github.com/dynabench-go/dynabench"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	type counts = dynabench.ValidationCounts
	pending, verified, rejected := dynabench.StatusPending, dynabench.StatusVerified, dynabench.StatusRejected
	for _, tc := range []struct {
		name       string
		status     string
		counts     counts
		label      string
		mode       string
		n          int
		wantStatus string
		wantCounts counts
	}{
		{"first correct", pending, counts{}, "correct", "user", 3, pending, counts{Correct: 1}},
		{"second correct", pending, counts{Correct: 1}, "correct", "user", 3, pending, counts{Correct: 2}},
		{"third correct verifies", pending, counts{Correct: 2}, "correct", "user", 3, verified, counts{Correct: 3}},
		{"third incorrect rejects", pending, counts{Incorrect: 2}, "incorrect", "user", 3, rejected, counts{Incorrect: 3}},
		{"third flagged rejects", pending, counts{Flagged: 2}, "flagged", "user", 3, rejected, counts{Flagged: 3}},
		{"mixed stays pending", pending, counts{Correct: 1, Incorrect: 1}, "flagged", "user", 3, pending,
			counts{Correct: 1, Incorrect: 1, Flagged: 1}},
		{"mixed: two each, then correct", pending, counts{Correct: 2, Incorrect: 2, Flagged: 2}, "correct", "user", 3, verified,
			counts{Correct: 3, Incorrect: 2, Flagged: 2}},
		{"mixed: two each, then incorrect", pending, counts{Correct: 2, Incorrect: 2}, "incorrect", "user", 3, rejected,
			counts{Correct: 2, Incorrect: 3}},
		{"incorrect and flagged do not add up", pending, counts{Incorrect: 2, Flagged: 2}, "correct", "user", 3, pending,
			counts{Correct: 1, Incorrect: 2, Flagged: 2}},
		{"N=1 correct", pending, counts{}, "correct", "user", 1, verified, counts{Correct: 1}},
		{"N=1 incorrect", pending, counts{}, "incorrect", "user", 1, rejected, counts{Incorrect: 1}},
		{"N=5 four correct", pending, counts{Correct: 3}, "correct", "user", 5, pending, counts{Correct: 4}},
		{"owner correct", pending, counts{Incorrect: 2}, "correct", "owner", 3, verified, counts{Incorrect: 2}},
		{"owner incorrect", pending, counts{Correct: 2}, "incorrect", "owner", 3, rejected, counts{Correct: 2}},
		{"owner flagged", pending, counts{}, "flagged", "owner", 3, rejected, counts{}},
		{"owner overturns verified", verified, counts{Correct: 3}, "incorrect", "owner", 3, rejected, counts{Correct: 3}},
		{"owner overturns rejected", rejected, counts{Incorrect: 3}, "correct", "owner", 3, verified, counts{Incorrect: 3}},
		{"owner confirms verified", verified, counts{Correct: 3}, "correct", "owner", 3, verified, counts{Correct: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &dynabench.Example{Status: tc.status, Counts: tc.counts}
			resolve(e, NewValidation{Label: tc.label, Mode: tc.mode}, tc.n)
			if e.Status != tc.wantStatus || e.Counts != tc.wantCounts {
				t.Errorf("status %s, counts %+v; want %s, %+v", e.Status, e.Counts, tc.wantStatus, tc.wantCounts)
			}
		})
	}
}

// TestContribution: what one example adds to the counters in each state; the rules move counters
// only by differences of these.
func TestContribution(t *testing.T) {
	t.Parallel()
	type d = dynabench.StatsDelta
	yes, no := ptr(true), ptr(false)
	for _, tc := range []struct {
		name   string
		status string
		wrong  *bool
		want   d
	}{
		{"pending, not fooled", dynabench.StatusPending, no, d{Collected: 1}},
		{"pending, fooled", dynabench.StatusPending, yes, d{Collected: 1, Fooled: 1}},
		{"pending, unknown (model failed or ask_user pending)", dynabench.StatusPending, nil, d{Collected: 1}},
		{"verified, fooled", dynabench.StatusVerified, yes, d{Collected: 1, Fooled: 1, VerifiedFooled: 1}},
		{"verified, not fooled", dynabench.StatusVerified, no, d{Collected: 1}},
		{"rejected, fooled", dynabench.StatusRejected, yes, d{Collected: 1, Fooled: 1, Rejected: 1, RejectedFooled: 1}},
		{"rejected, not fooled", dynabench.StatusRejected, no, d{Collected: 1, Rejected: 1}},
		{"retracted, fooled and verified before", dynabench.StatusRetracted, yes, d{Retracted: 1}},
		{"retracted, not fooled", dynabench.StatusRetracted, no, d{Retracted: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dynabench.Contribution(&dynabench.Example{Status: tc.status, ModelWrong: tc.wrong})
			if got != tc.want {
				t.Errorf("contribution %+v, want %+v", got, tc.want)
			}
		})
	}
	// A transition moves the counters by the difference: verified fooled → retracted.
	before := dynabench.Contribution(&dynabench.Example{Status: dynabench.StatusVerified, ModelWrong: yes})
	after := dynabench.Contribution(&dynabench.Example{Status: dynabench.StatusRetracted, ModelWrong: yes})
	if got, want := after.Sub(before), (d{Collected: -1, Fooled: -1, VerifiedFooled: -1, Retracted: 1}); got != want {
		t.Errorf("verified → retracted moves %+v, want %+v", got, want)
	}
	if !before.Sub(before).IsZero() || before.IsZero() {
		t.Errorf("IsZero")
	}
}
