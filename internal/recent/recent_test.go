package recent

import (
	"fmt"
	"testing"
	"time"
)

func TestMemory(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		put     string
		get     string
		at      time.Duration
		wantOK  bool
		wantLen int
	}
	cases := map[string]struct {
		reason string
		max    int
		steps  []step
	}{
		"within the TTL": {reason: "an entry is found until its TTL passed",
			steps: []step{{put: "a"}, {get: "a", at: time.Minute, wantOK: true, wantLen: 1}}},
		"after the TTL": {reason: "an entry older than the TTL is not found",
			steps: []step{{put: "a"}, {get: "a", at: 5*time.Minute + time.Second, wantLen: 0}}},
		"swept": {reason: "expired entries are dropped once a TTL passed, as the memory is used",
			steps: []step{{put: "a"}, {put: "b", at: time.Minute}, {get: "b", at: 11 * time.Minute, wantLen: 0}}},
		"put again renews": {reason: "an entry put again lives from then",
			steps: []step{{put: "a"}, {put: "a", at: 4 * time.Minute}, {get: "a", at: 8 * time.Minute, wantOK: true, wantLen: 1}}},
		"full, expired go first": {reason: "a full memory drops expired entries before live ones", max: 2,
			steps: []step{{put: "a"}, {put: "b", at: 4 * time.Minute}, {put: "c", at: 6 * time.Minute},
				{get: "b", at: 6 * time.Minute, wantOK: true, wantLen: 2}}},
		"full, never beyond the bound": {reason: "a full memory of live entries drops one to take a new one", max: 2,
			steps: []step{{put: "a"}, {put: "b"}, {put: "c"}, {get: "c", wantOK: true, wantLen: 2}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := New[string, int](5*time.Minute, tc.max)
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				if s.put != "" {
					m.Put(s.put, i, now)
					continue
				}
				if _, ok := m.Get(s.get, now); ok != s.wantOK {
					t.Errorf("%s\nstep %d: Get(%s) found = %v, want %v", tc.reason, i, s.get, ok, s.wantOK)
				}
				if n := m.Len(); n != s.wantLen {
					t.Errorf("%s\nstep %d: Len() = %d, want %d", tc.reason, i, n, s.wantLen)
				}
			}
		})
	}
}

// TestMemoryBound: however many keys come, the memory holds at most its bound.
func TestMemoryBound(t *testing.T) {
	m := New[string, struct{}](time.Hour, 100)
	now := time.Now()
	for i := range 10000 {
		m.Put(fmt.Sprint(i), struct{}{}, now)
	}
	if n := m.Len(); n != 100 {
		t.Errorf("Len() = %d after 10,000 keys, want the bound 100", n)
	}
}
