package bodyctx

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	"github.com/google/go-cmp/cmp"
)

func TestLimit(t *testing.T) {
	errTooLarge := errors.New("too large")
	cases := map[string]struct {
		reason string
		body   string
		limit  int64
		err    error
	}{
		"Under":      {reason: "a body under the limit is read whole", body: "abc", limit: 4},
		"Exactly":    {reason: "so is one of exactly the limit", body: "abcd", limit: 4},
		"OneOver":    {reason: "one byte over is the limit's error, with no more than the limit read", body: "abcde", limit: 4, err: errTooLarge},
		"FarOver":    {reason: "a large body is not read past the limit", body: strings.Repeat("x", 1<<20), limit: 1 << 10, err: errTooLarge},
		"EmptyLimit": {reason: "an empty body fits a limit of zero", body: "", limit: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := io.ReadAll(Limit(io.NopCloser(strings.NewReader(tc.body)), tc.limit, func() error { return errTooLarge }))
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nread error: -want +got:\n%s", tc.reason, diff)
			}
			if tc.err != nil {
				if int64(len(got)) > tc.limit {
					t.Errorf("%s\nread %d bytes, want at most %d", tc.reason, len(got), tc.limit)
				}
				return
			}
			if string(got) != tc.body {
				t.Errorf("%s\nread %q, want the body", tc.reason, got)
			}
		})
	}
}

// TestBound: a body declared longer than the limit is refused before it is
// read, with the body closed and the call's context cancelled; one within it
// is handed on, bounded.
func TestBound(t *testing.T) {
	errTooLarge := errors.New("too large")
	cases := map[string]struct {
		reason   string
		declared int64
		err      error
	}{
		"DeclaredOverTheLimit": {reason: "a body declared too long is refused unread: the body closed, the call cancelled", declared: 5, err: errTooLarge},
		"DeclaredWithin":       {reason: "a body declared within the limit is handed on", declared: 4},
		"NotDeclared":          {reason: "a body of unknown length is handed on, bounded as it is read", declared: -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			closed, cancelled := false, false
			resp := &http.Response{ContentLength: tc.declared, Body: closer{Reader: strings.NewReader("abcd"), closed: &closed}}
			err := Bound(resp, 4, func() { cancelled = true }, func() error { return errTooLarge })
			if diff := cmp.Diff(tc.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nBound() error: -want +got:\n%s", tc.reason, diff)
			}
			if tc.err != nil {
				if !closed || !cancelled {
					t.Errorf("%s\nclosed %v, cancelled %v; want both", tc.reason, closed, cancelled)
				}
				return
			}
			got, err := io.ReadAll(resp.Body)
			if err != nil || string(got) != "abcd" {
				t.Fatalf("%s\nread %q, %v; want the body", tc.reason, got, err)
			}
			_ = resp.Body.Close()
			if !closed || !cancelled {
				t.Errorf("%s\nclosing the body: closed %v, cancelled %v", tc.reason, closed, cancelled)
			}
		})
	}
}

type closer struct {
	io.Reader
	closed *bool
}

func (c closer) Close() error { *c.closed = true; return nil }
