package maxprocs

import (
	"context"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func TestNext(t *testing.T) {
	g := Defaults(4)
	cases := map[string]struct {
		reason string
		was    state
		cores  float64
		want   state
	}{
		"QuietWithMaxCounts": {
			reason: "a quiet second with max threads counts towards lowering them",
			was:    state{threads: 4}, cores: 0.2, want: state{threads: 4, over: time.Second}},
		"QuietLongEnoughLowers": {
			reason: "three quiet seconds lower the threads to one",
			was:    state{threads: 4, over: 2 * time.Second}, cores: 0.2, want: state{threads: 1}},
		"BusyWithMaxResets": {
			reason: "a busy second with max threads starts the quiet count anew",
			was:    state{threads: 4, over: 2 * time.Second}, cores: 0.7, want: state{threads: 4}},
		"BusyWithOneRaises": {
			reason: "a second of one core busy raises the threads to max",
			was:    state{threads: 1}, cores: 0.95, want: state{threads: 4}},
		"SomeUseWithOneStays": {
			reason: "use below the busy mark keeps one thread",
			was:    state{threads: 1}, cores: 0.6, want: state{threads: 1}},
		"QuietWithOneStays": {
			reason: "a quiet second with one thread has nothing to lower",
			was:    state{threads: 1}, cores: 0.1, want: state{threads: 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := g.next(tc.was, tc.cores); got != tc.want {
				t.Errorf("%s\nnext(%+v, %.2f) = %+v, want %+v", tc.reason, tc.was, tc.cores, got, tc.want)
			}
		})
	}
}

// TestRunFollowsTheProcess: a process that idles goes to one thread, and one
// that keeps a core busy goes back to max.
func TestRunFollowsTheProcess(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(was)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Low marks: the busy loop below shares the machine with other tests.
	g := Governor{Max: 2, Busy: 0.3, Quiet: 0.1, Raise: 100 * time.Millisecond, Lower: 200 * time.Millisecond, Every: 50 * time.Millisecond}
	go g.Run(ctx)

	waitFor(t, "one thread while idle", func() bool { return runtime.GOMAXPROCS(0) == 1 })

	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	waitFor(t, "two threads while a core is busy", func() bool { return runtime.GOMAXPROCS(0) == 2 })
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return ok(), nil })
	if err != nil {
		t.Fatalf("no %s within 30s: GOMAXPROCS %d", what, runtime.GOMAXPROCS(0))
	}
}
