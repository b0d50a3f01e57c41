package waitall

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	cases := map[string]struct {
		ids         []string
		doneAfter   map[string]int32 // checks before an id holds; -1: never
		wantMissing int
	}{
		"all at once":        {ids: []string{"a", "b"}, doneAfter: map[string]int32{"a": 0, "b": 0}},
		"one after a few":    {ids: []string{"a", "b"}, doneAfter: map[string]int32{"a": 0, "b": 3}},
		"one never: counted": {ids: []string{"a", "b", "c"}, doneAfter: map[string]int32{"a": 0, "b": -1, "c": -1}, wantMissing: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checks := map[string]*atomic.Int32{}
			for _, id := range tc.ids {
				checks[id] = &atomic.Int32{}
			}
			start := time.Now()
			at, missing := Until(context.Background(), tc.ids, 300*time.Millisecond, Every(10*time.Millisecond), func(_ context.Context, id string) bool {
				n := checks[id].Add(1) - 1
				return tc.doneAfter[id] >= 0 && n >= tc.doneAfter[id]
			})
			if missing != tc.wantMissing || len(at) != len(tc.ids)-tc.wantMissing {
				t.Fatalf("missing %d, done %d; want missing %d", missing, len(at), tc.wantMissing)
			}
			for id, when := range at {
				if when.Before(start) {
					t.Errorf("%s done at %s, before the start", id, when)
				}
				// A done id is not checked again.
				if want := tc.doneAfter[id] + 1; checks[id].Load() != want {
					t.Errorf("%s checked %d times, want %d", id, checks[id].Load(), want)
				}
			}
		})
	}
}
