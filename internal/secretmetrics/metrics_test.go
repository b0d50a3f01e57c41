package secretmetrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func in(d time.Duration) *time.Time {
	t := now.Add(d)
	return &t
}

func TestCollect(t *testing.T) {
	day := 24 * time.Hour
	cases := map[string]struct {
		reason    string
		published []Published
		err       error
		rotations []error
		want      string
	}{
		"State": {
			reason: "secrets by time to expiry, overdue rotations and retirements by what they wait for are what an operator alerts on",
			published: []Published{
				{ValidTo: in(-time.Minute)},
				{ValidTo: in(3 * day), RotationDue: true},
				{ValidTo: in(7 * day)},
				{ValidTo: in(10 * day)},
				{ValidTo: in(200 * day), Retiring: []Retiring{{Since: now.Add(-2 * time.Hour), ForRuntimes: true}, {Since: now.Add(-5 * time.Minute)}}},
				{ValidTo: in(180 * day), Retiring: []Retiring{{Since: now.Add(-30 * time.Minute), ForRuntimes: true}}},
				{},
			},
			rotations: []error{nil, nil, errors.New("IAS answered 500")},
			want: `
# HELP eventing_auth_client_secrets Published client secrets by the time left until they expire: expired, within 7d, 14d, 30d, 90d, later, or never.
# TYPE eventing_auth_client_secrets gauge
eventing_auth_client_secrets{expires_in="14d"} 1
eventing_auth_client_secrets{expires_in="30d"} 0
eventing_auth_client_secrets{expires_in="7d"} 2
eventing_auth_client_secrets{expires_in="90d"} 0
eventing_auth_client_secrets{expires_in="expired"} 1
eventing_auth_client_secrets{expires_in="later"} 2
eventing_auth_client_secrets{expires_in="never"} 1
# HELP eventing_auth_secret_retirement_oldest_seconds Time since the oldest retirement began (its successor's publication), by what it waits for.
# TYPE eventing_auth_secret_retirement_oldest_seconds gauge
eventing_auth_secret_retirement_oldest_seconds{waiting_for="runtimes"} 7200
eventing_auth_secret_retirement_oldest_seconds{waiting_for="time"} 300
# HELP eventing_auth_secret_retirements Older client secrets waiting to be deleted, by what they wait for (runtimes: some RuntimeSecret does not carry the successor yet; time: retireAfter).
# TYPE eventing_auth_secret_retirements gauge
eventing_auth_secret_retirements{waiting_for="runtimes"} 2
eventing_auth_secret_retirements{waiting_for="time"} 1
# HELP eventing_auth_secret_rotations_overdue Published client secrets within their application's rotateBefore that are not rotated yet.
# TYPE eventing_auth_secret_rotations_overdue gauge
eventing_auth_secret_rotations_overdue 1
# HELP eventing_auth_secret_rotations_total Rotations of a client secret that was within rotateBefore, by result (succeeded, failed).
# TYPE eventing_auth_secret_rotations_total counter
eventing_auth_secret_rotations_total{result="failed"} 1
eventing_auth_secret_rotations_total{result="succeeded"} 2
`,
		},
		"FailedRead": {
			reason: "a failed read exports no state rather than a wrong one; the counters stay",
			err:    errors.New("cache not started"),
			want: `
# HELP eventing_auth_secret_rotations_total Rotations of a client secret that was within rotateBefore, by result (succeeded, failed).
# TYPE eventing_auth_secret_rotations_total counter
eventing_auth_secret_rotations_total{result="failed"} 0
eventing_auth_secret_rotations_total{result="succeeded"} 0
`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			m := New(reg)
			m.now = func() time.Time { return now }
			m.ReadFrom(func(context.Context) ([]Published, error) { return tc.published, tc.err })
			for _, err := range tc.rotations {
				m.Rotated(err)
			}
			if err := testutil.GatherAndCompare(reg, strings.NewReader(tc.want)); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCertificateSeries: a ProviderConfig's certificate expiry is exported
// while reconciles report it, goes when it logs in with a password instead,
// and goes once no reconcile reported it for CertificateForget (the
// ProviderConfig was deleted or is no longer used).
func TestCertificateSeries(t *testing.T) {
	const name = "eventing_auth_ias_client_certificate_expiry_timestamp_seconds"
	clock := now
	m := New(nil)
	m.now = func() time.Time { return clock }
	series := func() int { return testutil.CollectAndCount(m, name) }

	m.ClientCertificate("ClusterProviderConfig/default", in(90*24*time.Hour))
	m.ClientCertificate("ProviderConfig/team-a/ias", in(10*24*time.Hour))
	if n := series(); n != 2 {
		t.Fatalf("%d series, want 2", n)
	}
	m.ClientCertificate("ProviderConfig/team-a/ias", nil)
	if n := series(); n != 1 {
		t.Fatalf("%d series after a switch to a password, want 1", n)
	}
	clock = clock.Add(CertificateForget - time.Minute)
	if n := series(); n != 1 {
		t.Fatalf("%d series within CertificateForget of the last report, want 1", n)
	}
	clock = clock.Add(2 * time.Minute)
	if n := series(); n != 0 {
		t.Fatalf("%d series after CertificateForget without a report, want 0", n)
	}
	// Without scrapes, reports keep the map to the ProviderConfigs in use.
	for i := range 100 {
		m.ClientCertificate(fmt.Sprintf("ProviderConfig/ns-%d/ias", i), in(time.Hour))
		clock = clock.Add(CertificateForget / 50)
	}
	if n := len(m.certs); n > 52 {
		t.Fatalf("%d certificates kept without scrapes, want those reported within CertificateForget", n)
	}
}
