package ias

import (
	"strings"
	"testing"
)

// TestListingBounds: a listing stops at a cursor longer than 4 KiB or sent
// before, at its page limit, and at 32 MiB of pages together; of cursors only
// digests are kept, and repeated apps count once.
func TestListingBounds(t *testing.T) {
	cases := map[string]struct {
		reason string
		run    func(l *listingBounds) string
		want   string
	}{
		"LongCursor": {
			reason: "A cursor over 4 KiB stops the listing.",
			run:    func(l *listingBounds) string { return l.next(strings.Repeat("c", 5<<10), 1) },
			want:   "IAS sent a cursor longer than 4 KiB",
		},
		"CursorAgain": {
			reason: "A cursor sent before stops the listing.",
			run: func(l *listingBounds) string {
				l.next("a", 1)
				return l.next("a", 2)
			},
			want: "IAS sent a cursor it had sent before",
		},
		"PageLimit": {
			reason: "The page limit stops the listing.",
			run:    func(l *listingBounds) string { return l.next("a", 3) },
			want:   "more pages than the tenant's size allows (3)",
		},
		"Bytes": {
			reason: "32 MiB of pages together stop the listing.",
			run: func(l *listingBounds) string {
				for range 32 {
					l.read(1 << 20)
				}
				return l.read(1)
			},
			want: "its pages together are larger than 32 MiB",
		},
		"RepeatedApps": {
			reason: "The same app read twice counts once.",
			run: func(l *listingBounds) string {
				l.app("a")
				l.app("a")
				l.app("b")
				if l.distinct() != 2 {
					return "counted " + string(rune('0'+l.distinct()))
				}
				return ""
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := newListingBounds(3)
			if got := tc.run(l); got != tc.want {
				t.Errorf("%s\ngot %q, want %q", tc.reason, got, tc.want)
			}
			for d := range l.cursors {
				if len(d) != 32 {
					t.Errorf("a cursor kept as %d bytes, want its 32-byte digest", len(d))
				}
			}
		})
	}
}
