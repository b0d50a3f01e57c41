package bodyctx

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestLimit(t *testing.T) {
	errTooLarge := errors.New("too large")
	cases := map[string]struct {
		body    string
		limit   int64
		wantErr bool
	}{
		"under":        {body: "abc", limit: 4},
		"exactly":      {body: "abcd", limit: 4},
		"one over":     {body: "abcde", limit: 4, wantErr: true},
		"far over":     {body: strings.Repeat("x", 1<<20), limit: 1 << 10, wantErr: true},
		"empty, limit": {body: "", limit: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := io.ReadAll(Limit(io.NopCloser(strings.NewReader(tc.body)), tc.limit, func() error { return errTooLarge }))
			if tc.wantErr {
				if !errors.Is(err, errTooLarge) || int64(len(got)) > tc.limit {
					t.Fatalf("read %d bytes, %v; want at most %d and the limit's error", len(got), err, tc.limit)
				}
				return
			}
			if err != nil || string(got) != tc.body {
				t.Fatalf("read %q, %v; want the body", got, err)
			}
		})
	}
}

// TestBound: a body declared longer than the limit is refused before it is
// read, with the body closed and the call's context cancelled; one within it
// is handed on, bounded.
func TestBound(t *testing.T) {
	errTooLarge := errors.New("too large")
	for name, tc := range map[string]struct {
		declared int64
		wantErr  bool
	}{
		"declared over the limit": {declared: 5, wantErr: true},
		"declared within":         {declared: 4},
		"not declared":            {declared: -1},
	} {
		t.Run(name, func(t *testing.T) {
			closed, cancelled := false, false
			resp := &http.Response{ContentLength: tc.declared, Body: closer{Reader: strings.NewReader("abcd"), closed: &closed}}
			err := Bound(resp, 4, func() { cancelled = true }, func() error { return errTooLarge })
			if tc.wantErr {
				if !errors.Is(err, errTooLarge) || !closed || !cancelled {
					t.Fatalf("%v, closed %v, cancelled %v; want the limit's error, closed and cancelled", err, closed, cancelled)
				}
				return
			}
			got, rerr := io.ReadAll(resp.Body)
			if err != nil || rerr != nil || string(got) != "abcd" {
				t.Fatalf("%v, read %q, %v; want the body", err, got, rerr)
			}
			_ = resp.Body.Close()
			if !closed || !cancelled {
				t.Errorf("closing the body: closed %v, cancelled %v", closed, cancelled)
			}
		})
	}
}

type closer struct {
	io.Reader
	closed *bool
}

func (c closer) Close() error { *c.closed = true; return nil }
