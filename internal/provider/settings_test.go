package provider

import (
	"flag"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDerive: every value the wiring derives from the poll interval and the
// workers, in one place.
func TestDerive(t *testing.T) {
	cases := map[string]struct {
		reason string
		change func(*Settings)
		want   derived
	}{
		"Defaults": {reason: "the defaults derive the jitter, the inventory's age, the bridge's resync and the workers from the poll", change: func(*Settings) {},
			want: derived{pollJitter: 30 * time.Second, inventoryAge: 30 * time.Second, bridgeResync: 5 * time.Minute, workers: 10}},
		"ShortPoll": {reason: "a short poll shortens what derives from it", change: func(s *Settings) { s.Poll = 3 * time.Second },
			want: derived{pollJitter: 300 * time.Millisecond, inventoryAge: 3 * time.Second, bridgeResync: 3 * time.Second, workers: 10}},
		"JitterAndWorkersSet": {reason: "what is set is kept; a rate of 0 still leaves one worker", change: func(s *Settings) { s.PollJitter, s.MaxReconcileRate = time.Second, 0 },
			want: derived{pollJitter: time.Second, inventoryAge: 30 * time.Second, bridgeResync: 5 * time.Minute, workers: 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := DefaultSettings()
			tc.change(&s)
			if diff := cmp.Diff(tc.want, s.derive(), cmp.AllowUnexported(derived{})); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestBind: a flag sets its setting; one not given keeps the default.
func TestBind(t *testing.T) {
	s := DefaultSettings()
	fs := flag.NewFlagSet("provider", flag.ContinueOnError)
	s.Bind(fs)
	if err := fs.Parse([]string{"--poll=1m", "--runtime-watcher-address=:8082"}); err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings()
	want.Poll, want.WatcherAddr = time.Minute, ":8082"
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}
