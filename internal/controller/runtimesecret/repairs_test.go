package runtimesecret

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/workqueue"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// TestObserveTellsRepairs: a Secret that held what it should and no longer
// does was changed by someone else, and its repair is counted; a change of
// what it should hold (a new client secret) and a first write are not; the
// third such change in a row is a fight, told in a Warning naming the writer.
func TestObserveTellsRepairs(t *testing.T) {
	scheme := fakes.Scheme()
	old := withData(creds, "client_secret", "OLD")
	credsSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "kcp"}, Data: creds}
	onRuntime := func(data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eventing-webhook-auth", Namespace: "kyma-system", Labels: v1alpha1.SecretLabels(),
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: fieldManager, Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: time.Now().Add(-time.Hour)}},
				{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: time.Now()}},
			}}, Type: corev1.SecretTypeOpaque, Data: data}
	}
	cases := map[string]struct {
		reason     string
		last       map[string][]byte // what the runtime held when last seen; nil: never seen
		runtime    *corev1.Secret    // nil: deleted
		fromEvent  bool
		before     int // changes by someone else already recorded, each a repair from an event
		repairs    map[string]float64
		fightEvent bool
	}{
		"DeletedBySomeoneElse": {
			reason: "a Secret deleted on the runtime since it was last seen is a repair, counted by what brought it (an event)",
			last:   creds, fromEvent: true, repairs: map[string]float64{runtimewatcher.TriggerEvent: 1},
		},
		"EditedBySomeoneElse": {
			reason: "a Secret edited by someone else is a repair, here found by a poll",
			last:   creds, runtime: onRuntime(old), repairs: map[string]float64{runtimewatcher.TriggerPoll: 1},
		},
		"NewCredentials": {
			reason: "a Secret that holds what was last written is no repair, though the credentials changed",
			last:   old, runtime: onRuntime(old),
		},
		"FirstWrite": {
			reason: "a Secret never written before is no repair",
		},
		"InSync": {
			reason: "an event for a Secret in sync repairs nothing",
			last:   creds, runtime: onRuntime(creds), fromEvent: true,
		},
		"ThirdChangeStartsFight": {
			reason: "the third change by someone else within the window is a fight, told once in an event",
			last:   creds, runtime: onRuntime(old), fromEvent: true, before: 2, repairs: map[string]float64{runtimewatcher.TriggerEvent: 3}, fightEvent: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			key := types.NamespacedName{Namespace: "kcp", Name: "rs"}
			w := runtimewatcher.New(runtimewatcher.Options{Metrics: runtimewatcher.NewMetrics(reg), Addr: "127.0.0.1:0"},
				targetsFn(func(string) []runtimewatcher.Target {
					return []runtimewatcher.Target{{RuntimeSecret: key, Secret: types.NamespacedName{Namespace: "kyma-system", Name: "eventing-webhook-auth"}}}
				}))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := w.Source().Start(ctx, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			for range tc.before {
				w.Repairing(key, true)
			}
			if tc.fromEvent {
				postEvent(t, w, "rt-1")
			}
			cr := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp"}, Spec: v1alpha1.RuntimeSecretSpec{
				ForProvider: v1alpha1.RuntimeSecretParameters{RuntimeID: "rt-1", CredentialsSecretRef: &xpv2.LocalSecretReference{Name: "creds"}}}}
			if tc.last != nil {
				cr.Status.AtProvider.DataHash = v1alpha1.DataHash(tc.last)
			}
			var objs []runtime.Object
			if tc.runtime != nil {
				objs = append(objs, tc.runtime)
			}
			rec := &fakes.Events{}
			e := &external{kube: crfake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(credsSecret).Build(), recorder: rec,
				kubeconfig: "kcp/kubeconfig-rt-1", kubeconfigKey: "config", runtime: fake.NewClientset(objs...).CoreV1(), watcher: w}
			if _, err := e.Observe(context.Background(), cr); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			for _, trigger := range []string{runtimewatcher.TriggerEvent, runtimewatcher.TriggerPoll} {
				if got := repairsCounted(t, reg, trigger); got != tc.repairs[trigger] {
					t.Errorf("%s\nrepairs{trigger=%q}: want %v, got %v", tc.reason, trigger, tc.repairs[trigger], got)
				}
			}
			var fights []event.Event
			for _, ev := range rec.All() {
				if ev.Reason == eventSecretFought {
					fights = append(fights, ev)
				}
			}
			switch {
			case !tc.fightEvent && len(fights) > 0:
				t.Errorf("%s\na fight told: %q", tc.reason, fights[0].Message)
			case tc.fightEvent && len(fights) != 1:
				t.Errorf("%s\nwant one %s event, got %d", tc.reason, eventSecretFought, len(fights))
			case tc.fightEvent:
				if ev := fights[0]; ev.Type != event.TypeWarning || !strings.Contains(ev.Message, `last written by "kubectl-edit"`) ||
					!strings.Contains(ev.Message, "3 times") || !strings.Contains(ev.Message, "wait 1s") {
					t.Errorf("%s\nfight event: %s %q", tc.reason, ev.Type, ev.Message)
				}
			}
		})
	}
}

// targetsFn finds the targets of a runtime with a function.
type targetsFn func(id string) []runtimewatcher.Target

func (fn targetsFn) Of(_ context.Context, id string) ([]runtimewatcher.Target, error) {
	return fn(id), nil
}

// postEvent delivers an event of runtime id's Secret as the gateway does.
func postEvent(t *testing.T, w *runtimewatcher.Listener, id string) {
	t.Helper()
	ca, err := testcerts.NewCA("gateway")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue(id, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, w.Path(), strings.NewReader(
		`{"watched":{"namespace":"kyma-system","name":"eventing-webhook-auth"},"watchedGvk":{"version":"v1","kind":"Secret"}}`))
	r.Header.Set("X-Forwarded-Client-Cert", skrwebhook.XFCC(c.Cert))
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		t.Fatalf("event refused: %d %s", rec.Code, rec.Body.String())
	}
}

func repairsCounted(t *testing.T, reg *prometheus.Registry, trigger string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "eventing_auth_runtime_secret_repairs_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "trigger" && l.GetValue() == trigger {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestRepairKeepsReadySince: a Secret deleted by someone else is put back by
// Update, not Create (which would record a creation), and the Ready condition
// ends as it began, transition time and all: the repair writes no status.
func TestRepairKeepsReadySince(t *testing.T) {
	scheme := fakes.Scheme()
	since := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	cr := &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp"}, Spec: v1alpha1.RuntimeSecretSpec{
		ForProvider: v1alpha1.RuntimeSecretParameters{RuntimeID: "rt-1", CredentialsSecretRef: &xpv2.LocalSecretReference{Name: "creds"}}}}
	cr.Status.AtProvider.DataHash = v1alpha1.DataHash(creds)
	ready := xpv2.Available()
	ready.LastTransitionTime = since
	cr.SetConditions(ready)
	onRuntime := fake.NewClientset().CoreV1()
	e := &external{kube: crfake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "kcp"}, Data: creds}).Build(),
		recorder: &fakes.Events{}, kubeconfig: "kcp/kubeconfig-rt-1", kubeconfigKey: "config", runtime: onRuntime, watcher: NoWatcher{}}

	obs, err := e.Observe(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	if !obs.ResourceExists || obs.ResourceUpToDate {
		t.Fatalf("a deleted Secret the provider wrote: exists %v, up to date %v; want an update", obs.ResourceExists, obs.ResourceUpToDate)
	}
	if c := cr.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "was deleted; restoring it") {
		t.Errorf("while restoring: Ready %s %q", c.Status, c.Message)
	}
	if _, err := e.Update(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	got, err := onRuntime.Secrets("kyma-system").Get(context.Background(), "eventing-webhook-auth", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Secret was not put back: %v", err)
	}
	if v1alpha1.DataHash(got.Data) != v1alpha1.DataHash(creds) || got.Labels[v1alpha1.LabelWatchedBy] != v1alpha1.WatchedBy {
		t.Errorf("put back as %v with labels %v", got.Data, got.Labels)
	}
	if c := cr.GetCondition(xpv2.TypeReady); !c.Equal(ready) || !c.LastTransitionTime.Equal(&since) {
		t.Errorf("after the repair: Ready %+v, want it as it began %+v", c, ready)
	}
}
