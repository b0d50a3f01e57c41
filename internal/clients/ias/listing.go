package ias

import (
	"crypto/sha256"
	"fmt"
	"hash/maphash"
)

// Bounds of one listing as a whole, beside its pages (maxPages). A real
// tenant of 10,000 apps takes 100 pages of tens of KiB each, so none of them
// is reached by a real tenant; each keeps a hostile one (huge cursors, padded
// pages, the same apps over and over) from costing the provider more than a
// few MiB per listing.
const (
	// maxListingBytes bounds the answers one listing reads together.
	maxListingBytes = 32 << 20
	// maxListingApps bounds the distinct apps one listing reads.
	maxListingApps = DefaultMaxPages * pageSize
	// maxCursorBytes bounds a cursor: a real one is a short opaque token.
	maxCursorBytes = 4 << 10
)

// listingBounds follows one listing against its bounds. Of the cursors it
// keeps digests only, for loop detection; of the apps, a 64-bit hash of each
// ID, to count the distinct ones: so padded pages and repeated apps neither
// cost memory nor raise the next listing's page limit (raiseListed).
type listingBounds struct {
	maxPages int
	bytes    int
	cursors  map[[sha256.Size]byte]bool
	seed     maphash.Seed
	apps     map[uint64]struct{}
}

func newListingBounds(maxPages int) *listingBounds {
	return &listingBounds{maxPages: maxPages, cursors: map[[sha256.Size]byte]bool{}, seed: maphash.MakeSeed(), apps: map[uint64]struct{}{}}
}

// read counts a page's bytes; it says why the listing stops, if it does.
func (l *listingBounds) read(n int) string {
	l.bytes += n
	if l.bytes > maxListingBytes {
		return fmt.Sprintf("its pages together are larger than %d MiB", maxListingBytes>>20)
	}
	return ""
}

// app counts an app read.
func (l *listingBounds) app(id string) {
	if len(l.apps) < maxListingApps {
		l.apps[maphash.String(l.seed, id)] = struct{}{}
	}
}

// distinct is how many distinct apps the listing read.
func (l *listingBounds) distinct() int64 { return int64(len(l.apps)) }

// next checks the cursor of the page after page pages; it says why the
// listing stops, if it does.
func (l *listingBounds) next(cursor string, pages int) string {
	if len(cursor) > maxCursorBytes {
		return fmt.Sprintf("IAS sent a cursor longer than %d KiB", maxCursorBytes>>10)
	}
	d := sha256.Sum256([]byte(cursor))
	switch {
	case l.cursors[d]:
		return "IAS sent a cursor it had sent before"
	case pages >= l.maxPages:
		return fmt.Sprintf("more pages than the tenant's size allows (%d)", l.maxPages)
	case len(l.apps) >= maxListingApps:
		return fmt.Sprintf("more than %d applications", maxListingApps)
	}
	l.cursors[d] = true
	return ""
}

// full tells whether the listing stopped at its page limit after pages.
func (l *listingBounds) full(pages int) bool { return pages >= l.maxPages }
