package reconciler

import (
	"context"
	"errors"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

// TestStateRecorder: the gauges count the kind's resources and those Ready and
// Synced, as crossplane-runtime's recorder does, from the cache's objects; a
// reading that fails leaves the last figures.
func TestStateRecorder(t *testing.T) {
	rs := func(conds ...xpv2.Condition) client.Object {
		r := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs"}}
		r.SetConditions(conds...)
		return r
	}
	errBoom := errors.New("boom")
	cases := map[string]struct {
		reason                string
		items                 []client.Object
		listErr               error
		exists, ready, synced float64
		err                   error
	}{
		"Counted": {
			reason: "Ready and Synced are counted apart; a resource without conditions only exists.",
			items: []client.Object{rs(xpv2.Available(), xpv2.ReconcileSuccess()), rs(xpv2.Creating(), xpv2.ReconcileSuccess()),
				rs(xpv2.Available(), xpv2.ReconcileError(errBoom)), rs()},
			exists: 4, ready: 2, synced: 2,
		},
		"ReadingFails": {
			reason:  "A reading that fails is returned and sets no gauge.",
			listErr: errBoom,
			err:     errBoom,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cached := func(context.Context) ([]client.Object, error) { return tc.items, tc.listErr }
			m := statemetrics.NewMRStateMetrics()
			r := &stateRecorder{cached: cached, log: logging.NewNopLogger(), metrics: m,
				labels: prometheus.Labels{"gvk": "RuntimeSecret"}}
			if diff := cmp.Diff(tc.err, r.record(context.Background()), test.EquateErrors()); diff != "" {
				t.Errorf("%s\nrecord(): -want error, +got error:\n%s", tc.reason, diff)
			}
			got := []float64{testutil.ToFloat64(m.Exists.With(r.labels)), testutil.ToFloat64(m.Ready.With(r.labels)), testutil.ToFloat64(m.Synced.With(r.labels))}
			if diff := cmp.Diff([]float64{tc.exists, tc.ready, tc.synced}, got); diff != "" {
				t.Errorf("%s\nexists, ready, synced: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
