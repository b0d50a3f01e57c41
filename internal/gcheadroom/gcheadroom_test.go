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
		reason      string
		percent     int
		floor, live uint64
		want        int
	}{
		"SmallHeap":          {reason: "a small heap gets the floor, so that it is not collected over and over", percent: 50, floor: 48 * mib, live: 24 * mib, want: 200},
		"LargeHeap":          {reason: "a large heap gets the percentage, so that memory stays within its budget", percent: 50, floor: 48 * mib, live: 200 * mib, want: 50},
		"BothTheSame":        {reason: "where floor and percentage meet, either gives the same", percent: 50, floor: 48 * mib, live: 96 * mib, want: 50},
		"AlmostEmptyHeap":    {reason: "an almost empty heap would get an unbounded percentage", percent: 50, floor: 48 * mib, live: 1024, want: maxPercent},
		"NothingMeasuredYet": {reason: "so would a heap not measured yet", percent: 50, floor: 48 * mib, live: 0, want: maxPercent},
		"PercentAboveBound":  {reason: "a percentage set above the bound is the operator's choice", percent: 3000, floor: 48 * mib, live: 1024, want: 3000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Percent(tc.percent, tc.floor, tc.live); got != tc.want {
				t.Errorf("%s\nPercent(%d, %d, %d) = %d, want %d", tc.reason, tc.percent, tc.floor, tc.live, got, tc.want)
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
