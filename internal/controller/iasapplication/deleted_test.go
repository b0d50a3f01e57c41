package iasapplication

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestDeleted(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		reason  string
		put     string // the app the Delete removed; "" for none
		askID   string
		askAt   time.Time
		want    bool
		wantLen int
	}{
		"JustDeleted": {
			reason: "The Observe right after a Delete learns the app is gone.",
			put:    "app-1", askID: "app-1", askAt: t0.Add(time.Second), want: true, wantLen: 1,
		},
		"AnotherApp": {
			reason: "A deletion of another app says nothing about this one (the external name changed).",
			put:    "app-1", askID: "app-2", askAt: t0.Add(time.Second), want: false, wantLen: 1,
		},
		"NeverDeleted": {
			reason: "Without a Delete IAS must be asked.",
			askID:  "app-1", askAt: t0, want: false, wantLen: 0,
		},
		"AgedOut": {
			reason: "A deletion is forgotten after deletedTTL, so the memory holds a few minutes' deletions at most.",
			put:    "app-1", askID: "app-1", askAt: t0.Add(deletedTTL + time.Second), want: false, wantLen: 0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := newDeleted()
			if tc.put != "" {
				d.put(types.UID("uid"), tc.put, t0)
			}
			if got := d.gone(types.UID("uid"), tc.askID, tc.askAt); got != tc.want {
				t.Errorf("%s\ngone(...) = %v, want %v", tc.reason, got, tc.want)
			}
			if got := d.len(); got != tc.wantLen {
				t.Errorf("%s\nremembered %d deletions, want %d", tc.reason, got, tc.wantLen)
			}
		})
	}
}
