// Package maxprocs sets how many threads run the process's Go code at once
// (GOMAXPROCS) from the CPU it uses: one while one core is more than it needs,
// Go's own default while it is busy.
//
// The provider mostly waits, on IAS's rate limit, the API server and the
// runtimes, and each of its wake-ups is short: a reconcile, a watch event, an
// HTTP/1.1 connection's read or write loop. With more than one thread, Go's
// scheduler hands those wake-ups between threads and wakes idle threads to
// look for work, which costs more CPU than running them side by side saves. A
// start, which decodes every cached object and lists every tenant, is the
// exception: it needs what the node gives it.
package maxprocs

import (
	"context"
	"runtime"
	"syscall"
	"time"
)

// Governor decides the threads from the cores the process used over windows of
// Every.
type Governor struct {
	// Max is what the process runs with while busy: Go's default.
	Max int
	// Busy is the cores used, at or above which one thread is too few.
	Busy float64
	// Quiet is the cores used, below which Max threads are more than needed.
	Quiet float64
	// Raise is how long use stays at Busy or above before Max is set; Lower,
	// how long it stays below Quiet before one is.
	Raise, Lower time.Duration
	// Every is the window over which use is measured.
	Every time.Duration
}

// Defaults are the governor's settings with max threads while busy: a
// second of one core busy raises them, three quiet seconds lower them again.
// A bring-up at the IAS rate limit uses a fraction of a core.
func Defaults(maxThreads int) Governor {
	return Governor{Max: maxThreads, Busy: 0.9, Quiet: 0.5, Raise: time.Second, Lower: 3 * time.Second, Every: time.Second}
}

// state is what the governor knows between windows.
type state struct {
	threads int
	// over is how long use has been on the side of its threshold that
	// would change threads.
	over time.Duration
}

// next returns the state after a window in which the process used cores.
func (g Governor) next(s state, cores float64) state {
	switch {
	case s.threads < g.Max && cores >= g.Busy, s.threads > 1 && cores < g.Quiet:
		s.over += g.Every
	default:
		s.over = 0
	}
	switch {
	case s.threads < g.Max && s.over >= g.Raise:
		return state{threads: g.Max}
	case s.threads > 1 && s.over >= g.Lower:
		return state{threads: 1}
	}
	return s
}

// Run sets the threads from the process's use until ctx is done; it begins
// with Max, since a process begins with its start.
func (g Governor) Run(ctx context.Context) {
	if g.Max <= 1 {
		return
	}
	s := state{threads: g.Max}
	runtime.GOMAXPROCS(s.threads)
	t := time.NewTicker(g.Every)
	defer t.Stop()
	used, at := processCPU(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			u := processCPU()
			was := s.threads
			s = g.next(s, (u-used).Seconds()/now.Sub(at).Seconds())
			used, at = u, now
			if s.threads != was {
				runtime.GOMAXPROCS(s.threads)
			}
		}
	}
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
