package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dynabench-go/dynabench"
)

func TestReadJSONL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		body      string
		fnErr     map[int]error // fn's error on that line
		wantLines []int
		wantCode  string
		wantField string
	}{
		{name: "lines", body: "{}\n{}\n", wantLines: []int{1, 2}},
		{name: "no final newline", body: "{}\n{}", wantLines: []int{1, 2}},
		{name: "blank lines skipped, numbers kept", body: "\n{}\n  \n\t{}\r\n", wantLines: []int{2, 4}},
		{name: "empty", body: "", wantLines: nil},
		{name: "invalid UTF-8", body: "{}\n{\"a\":\"\xff\"}\n{}\n", wantLines: []int{1}, wantCode: dynabench.EINVALID, wantField: "line 2"},
		{name: "fn error names the line", body: "{}\n{}\n{}\n", fnErr: map[int]error{3: errors.New("bad")}, wantLines: []int{1, 2, 3},
			wantCode: dynabench.EINVALID, wantField: "line 3"},
		{name: "fn's own error passes through", body: "{}\n", fnErr: map[int]error{1: dynabench.Errorf(dynabench.ECONFLICT, "dup")},
			wantLines: []int{1}, wantCode: dynabench.ECONFLICT},
		{name: "line too long", body: "{}\n" + strings.Repeat("x", MaxJSONLLine+1) + "\n", wantLines: []int{1},
			wantCode: dynabench.ETOOLARGE, wantField: "line 2"},
		{name: "too many lines", body: strings.Repeat("{}\n", MaxJSONLLines+1), wantCode: dynabench.ETOOLARGE, wantField: "body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []int
			err := ReadJSONL(strings.NewReader(tc.body), func(line int, raw []byte) error {
				lines = append(lines, line)
				if strings.TrimSpace(string(raw)) != string(raw) {
					t.Errorf("line %d not trimmed: %q", line, raw)
				}
				return tc.fnErr[line]
			})
			wantCode(t, err, tc.wantCode)
			var de *dynabench.Error
			if errors.As(err, &de) && tc.wantField != "" && de.Field != tc.wantField {
				t.Errorf("field %q, want %q", de.Field, tc.wantField)
			}
			if tc.name != "too many lines" && fmt.Sprint(lines) != fmt.Sprint(tc.wantLines) {
				t.Errorf("lines %v, want %v", lines, tc.wantLines)
			}
		})
	}
}

// TestUploadContextsIsAllOrNothing: a bad line stores nothing, not even the good lines before it.
func TestUploadContextsIsAllOrNothing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, nil)
		ctx := context.Background()
		body := `{"context":{"context":"good"},"tag":"batch"}` + "\n" + `{"context":{"context":"good"},"tag":"batch"}` + "\n" + `{"context":{}}` + "\n"
		n, err := f.svc.UploadContexts(ctx, f.admin, "tk", 1, strings.NewReader(body))
		wantCode(t, err, dynabench.EINVALID)
		if de, _ := err.(*dynabench.Error); n != 0 || de.Field != "line 3" {
			t.Errorf("upload: %d, %v", n, err)
		}
		_, err = f.svc.PickContext(ctx, f.users["alice"], "tk", "", "batch")
		wantCode(t, err, dynabench.ENOTFOUND)
		_, err = f.svc.UploadContexts(ctx, f.users["alice"], "tk", 1, strings.NewReader(`{"context":{"context":"x"}}`))
		wantCode(t, err, dynabench.EFORBIDDEN)
		_, err = f.svc.UploadContexts(ctx, nil, "tk", 1, strings.NewReader(`{"context":{"context":"x"}}`))
		wantCode(t, err, dynabench.EUNAUTHORIZED)
		_, err = f.svc.UploadContexts(ctx, f.admin, "tk", 2, strings.NewReader(`{"context":{"context":"x"}}`))
		wantCode(t, err, dynabench.ENOTFOUND)
	})
}

// TestNextRound: closing a round and opening the next, and what is refused on the way.
func TestNextRound(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, says(label("positive")))
		ctx := context.Background()
		_, err := f.svc.NextRound(ctx, f.users["alice"], "tk", nil, "")
		wantCode(t, err, dynabench.EFORBIDDEN)
		_, err = f.svc.NextRound(ctx, f.admin, "tk", []int64{f.modelID, f.modelID}, "")
		wantCode(t, err, dynabench.EINVALID)
		r, err := f.svc.NextRound(ctx, f.admin, "tk", []int64{f.modelID}, "")
		wantCode(t, err, "")
		if r.Number != 2 || r.Status != dynabench.RoundOpen || len(r.ModelIDs) != 1 {
			t.Errorf("round %+v", r)
		}
		old, err := f.store.FindRound(ctx, f.task.ID, 1)
		wantCode(t, err, "")
		if old.Status != dynabench.RoundClosed || old.ClosedAt == nil {
			t.Errorf("round 1 %+v", old)
		}
		task, _ := f.svc.Task(ctx, "tk")
		if task.CurrentRound != 2 {
			t.Errorf("current round %d", task.CurrentRound)
		}
	})
}

// TestNextRoundRace: two owners open the next round at once. Whether the second one overlaps the
// first (and is told to reload) or comes just after it (and opens one more round), the rounds stay
// numbered 1..n with only the last open, and nothing but a conflict is ever reported.
func TestNextRoundRace(t *testing.T) {
	forEachEngine(t, func(t *testing.T, engine string) {
		f := newFixture(t, engine, dynabench.TaskSettings{}, nil)
		ctx := context.Background()
		succeeded := 0
		for i := range 10 {
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for j := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[j] = f.svc.NextRound(ctx, f.admin, "tk", nil, "")
				}()
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case !dynabench.IsCode(err, dynabench.ECONFLICT):
					t.Errorf("try %d: %v", i, err)
				}
			}
			if ok == 0 {
				t.Errorf("try %d: neither next-round succeeded: %v", i, errs)
			}
			succeeded += ok
		}
		rounds, err := f.store.FindRounds(ctx, f.task.ID)
		if err != nil {
			t.Fatal(err)
		}
		task, _ := f.svc.Task(ctx, "tk")
		if len(rounds) != succeeded+1 || task.CurrentRound != len(rounds) {
			t.Errorf("%d rounds after %d successes, current %d", len(rounds), succeeded, task.CurrentRound)
		}
		for i, r := range rounds {
			last := i == len(rounds)-1
			if r.Number != i+1 || (r.Status == dynabench.RoundOpen) != last || (r.ClosedAt == nil) != last {
				t.Errorf("round %d of %d: %+v", i+1, len(rounds), r)
			}
		}
	})
}
