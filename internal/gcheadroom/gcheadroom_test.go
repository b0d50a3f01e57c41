package gcheadroom

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	cases := map[string]struct {
		percent     int
		floor, live uint64
		want        int
	}{
		"a small heap gets the floor":          {percent: 50, floor: 48 * mib, live: 24 * mib, want: 200},
		"a large heap gets the percentage":     {percent: 50, floor: 48 * mib, live: 200 * mib, want: 50},
		"where both give the same":             {percent: 50, floor: 48 * mib, live: 96 * mib, want: 50},
		"an almost empty heap is bounded":      {percent: 50, floor: 48 * mib, live: 1024, want: maxPercent},
		"nothing measured yet is bounded":      {percent: 50, floor: 48 * mib, live: 0, want: maxPercent},
		"a percentage above the bound is kept": {percent: 3000, floor: 48 * mib, live: 1024, want: 3000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Percent(tc.percent, tc.floor, tc.live); got != tc.want {
				t.Errorf("Percent(%d, %d, %d) = %d, want %d", tc.percent, tc.floor, tc.live, got, tc.want)
			}
		})
	}
}

// TestKeepRaisesThePercentageAfterACollection: the floor takes effect after
// the collections that follow Keep, as the process runs.
func TestKeepRaisesThePercentageAfterACollection(t *testing.T) {
	was := debug.SetGCPercent(100)
	defer debug.SetGCPercent(was)
	Keep(50, 1<<40) // a floor no test heap reaches: the bound applies
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		got := debug.SetGCPercent(-1)
		debug.SetGCPercent(got)
		if got == maxPercent {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is %d after collections, want %d", got, maxPercent)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
