package bodyctx

import (
	"errors"
	"io"
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
