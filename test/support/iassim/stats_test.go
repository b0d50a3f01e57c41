package iassim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatsSince(t *testing.T) {
	before := Stats{"list": {200: 3}, "delete": {204: 1}}
	now := Stats{"list": {200: 5, 429: 1}, "delete": {204: 1}, "create": {201: 2}}
	want := Stats{"list": {200: 2, 429: 1}, "create": {201: 2}}
	if diff := cmp.Diff(want, now.Since(before)); diff != "" {
		t.Errorf("Since: -want +got:\n%s", diff)
	}
}
