package benchfig

import (
	"os"
	"testing"
	"time"
)

func TestUsageOfThisProcess(t *testing.T) {
	// Burn some CPU so that at least one clock tick is counted.
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	u := UsageOf(os.Getpid())
	if u.CPU <= 0 || u.RSS <= 0 || u.PeakRSS < u.RSS {
		t.Errorf("UsageOf(self) = %+v, want CPU and RSS above zero and peak at least RSS", u)
	}
	if gone := UsageOf(1 << 30); gone != (Usage{}) {
		t.Errorf("UsageOf(no such process) = %+v, want zero", gone)
	}
}
