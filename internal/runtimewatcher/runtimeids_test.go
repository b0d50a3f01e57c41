package runtimewatcher

import (
	"errors"
	"k8s.io/utils/clock"
	"net/http/httptest"
	"testing"

	"github.com/kyma-project/runtime-watcher/listener/pkg/v2/certificate"
)

func TestRuntimeIDs(t *testing.T) {
	rt1, rt2, noCN := xfcc(t, "rt-1"), xfcc(t, "rt-2"), xfcc(t, "")
	type read struct {
		xfcc    string
		id      string
		err     error // nil, or errors.Is target; errAny for any error
		remains int   // runtimes remembered after the read
	}
	errAny := errors.New("any")
	cases := map[string][]read{
		"SameRuntimeTwice": {{xfcc: rt1, id: "rt-1", remains: 1}, {xfcc: rt1, id: "rt-1", remains: 1}},
		"TwoRuntimes":      {{xfcc: rt1, id: "rt-1", remains: 1}, {xfcc: rt2, id: "rt-2", remains: 2}, {xfcc: rt1, id: "rt-1", remains: 2}},
		"NoCommonName":     {{xfcc: noCN, id: "", remains: 0}, {xfcc: noCN, id: "", remains: 0}},
		"NotACertificate":  {{xfcc: `Hash=1;Cert="not-a-certificate"`, err: errAny, remains: 0}, {xfcc: rt1, id: "rt-1", remains: 1}},
		"NoHeader":         {{err: certificate.ErrHeaderMissing, remains: 0}},
	}
	for name, reads := range cases {
		t.Run(name, func(t *testing.T) {
			ids := newRuntimeIDs(nil, clock.RealClock{})
			for i, rd := range reads {
				r := httptest.NewRequest("POST", "/", nil)
				if rd.xfcc != "" {
					r.Header.Set(certificate.XFCCHeader, rd.xfcc)
				}
				id, err := ids.of(r)
				switch {
				case rd.err == nil && err != nil:
					t.Fatalf("read %d: %v", i, err)
				case rd.err == errAny && err == nil, rd.err != nil && rd.err != errAny && !errors.Is(err, rd.err):
					t.Fatalf("read %d: want error %v, got %v", i, rd.err, err)
				}
				if id != rd.id {
					t.Errorf("read %d: want runtime %q, got %q", i, rd.id, id)
				}
				if n := ids.cache.Len(); n != rd.remains {
					t.Errorf("read %d: want %d runtimes remembered, got %d", i, rd.remains, n)
				}
			}
		})
	}
}
