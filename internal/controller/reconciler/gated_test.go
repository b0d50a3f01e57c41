package reconciler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// lateMapper knows a kind only after it was asked unknownFor times, as the REST
// mapper does while discovery lags behind a new CRD.
type lateMapper struct {
	meta.RESTMapper
	unknownFor int
	err        error
	calls      int
}

func (m *lateMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.calls++
	if m.err != nil {
		return nil, m.err
	}
	if m.calls <= m.unknownFor {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return &meta.RESTMapping{}, nil
}

func TestWaitForMappings(t *testing.T) {
	kind := schema.GroupVersionKind{Group: "runtime.eventingauth.kyma-project.io", Version: "v1alpha1", Kind: "RuntimeSecret"}
	cases := map[string]struct {
		reason    string
		mapper    *lateMapper
		wantErr   string
		wantCalls int
	}{
		"KnownAtOnce": {
			reason: "a kind the API server serves starts its controller at once",
			mapper: &lateMapper{}, wantCalls: 1,
		},
		"KnownOnceDiscoveryShows": {
			reason: "a CRD just installed is waited for until discovery shows it",
			mapper: &lateMapper{unknownFor: 3}, wantCalls: 4,
		},
		"NeverKnown": {
			reason: "a kind never served ends the wait with the REST mapper's error",
			mapper: &lateMapper{unknownFor: 1 << 30}, wantErr: "no matches for kind",
		},
		"DiscoveryFails": {
			reason: "another discovery error is returned at once",
			mapper: &lateMapper{err: errors.New("connection refused")}, wantErr: "connection refused", wantCalls: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := waitForMappings(context.Background(), tc.mapper, time.Millisecond, 50*time.Millisecond, kind)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("%s\nwaitForMappings: %v", tc.reason, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("%s\nwaitForMappings: got %v, want an error with %q", tc.reason, err, tc.wantErr)
			}
			if tc.wantCalls != 0 && tc.mapper.calls != tc.wantCalls {
				t.Errorf("%s\nRESTMapping called %d times, want %d", tc.reason, tc.mapper.calls, tc.wantCalls)
			}
		})
	}
}
