package providerconfig

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
)

// recordingQueue records what is added to it, and when.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	now, later []reconcile.Request
	after      []time.Duration
}

func (q *recordingQueue) Add(r reconcile.Request) { q.now = append(q.now, r) }
func (q *recordingQueue) AddAfter(r reconcile.Request, d time.Duration) {
	q.later, q.after = append(q.later, r), append(q.after, d)
}

func TestSettledUsagesCountOnceLater(t *testing.T) {
	usage := func(kind string) *v1alpha1.ProviderConfigUsage {
		return &v1alpha1.ProviderConfigUsage{ObjectMeta: metav1.ObjectMeta{Name: "u", Namespace: "kcp-system"},
			TypedProviderConfigUsage: xpv2.TypedProviderConfigUsage{ProviderConfigReference: xpv2.ProviderConfigReference{Kind: kind, Name: "default"}}}
	}
	cases := map[string]struct {
		reason    string
		usage     *v1alpha1.ProviderConfigUsage
		wantLater []reconcile.Request
	}{
		"ThisKind": {
			reason:    "a usage of this kind is counted once the burst of usages settles, not for each",
			usage:     usage("ClusterProviderConfig"),
			wantLater: []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "default"}}},
		},
		"OtherKind": {
			reason: "a usage of the other kind is not this kind's to count",
			usage:  usage("ProviderConfig"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := settled(&resource.EnqueueRequestForProviderConfig{Kind: "ClusterProviderConfig"}, UsageSettle)
			q := &recordingQueue{}
			h.Create(context.Background(), ctrlevent.CreateEvent{Object: tc.usage}, q)
			h.Delete(context.Background(), ctrlevent.DeleteEvent{Object: tc.usage}, q)
			if len(q.now) != 0 {
				t.Errorf("%s\nenqueued at once: %v", tc.reason, q.now)
			}
			var want []reconcile.Request
			if tc.wantLater != nil {
				want = append(tc.wantLater, tc.wantLater...) // creation and deletion
			}
			if diff := cmp.Diff(want, q.later); diff != "" {
				t.Errorf("%s\nenqueued later (-want +got):\n%s", tc.reason, diff)
			}
			for _, d := range q.after {
				if d != UsageSettle {
					t.Errorf("%s\nenqueued after %s, want %s", tc.reason, d, UsageSettle)
				}
			}
		})
	}
}
