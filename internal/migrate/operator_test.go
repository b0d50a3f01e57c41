package migrate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestOperatorStopped: the migration runs only when nothing
// eventing-auth-manager leaves in the cluster says it runs, and not when that
// cannot be read.
func TestOperatorStopped(t *testing.T) {
	now := time.Now()
	s := DefaultOperatorSigns()
	lease := func(renewed time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.LeaderLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("eventing-auth-manager-controller-manager-7c9f_1"),
				LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &metav1.MicroTime{Time: now.Add(-renewed)}}}
	}
	deployment := func(replicas int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Deployment}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas)}}
	}
	pod := func(phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: "eventing-auth-manager-controller-manager-7c9f", Labels: s.PodLabels},
			Status: corev1.PodStatus{Phase: phase}}
	}
	imageDeployment := func(ns, name, image string, replicas int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: image}}}}}}
	}
	forbidden := kerrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, s.LeaderLease, errors.New("no"))
	cases := map[string]struct {
		reason   string
		objs     []client.Object
		getErr   error
		named    bool
		neverRan bool
		runs     bool
	}{
		"NothingFound": {
			reason: "Nothing of the operator under its default names is no proof: it may run under others.",
			runs:   true,
		},
		"NothingWhereNamed": {
			reason: "Nothing of the operator where the user said it ran: it was removed.",
			named:  true,
		},
		"NeverRan": {
			reason:   "The user says it never ran: finding nothing is no reason to refuse.",
			neverRan: true,
		},
		"NeverRanButRuns": {
			reason:   "Told it never ran, the migration still refuses beside one that runs.",
			objs:     []client.Object{lease(5 * time.Second)},
			neverRan: true,
			runs:     true,
		},
		"OtherNamesOtherNamespace": {
			reason: "A Deployment of another name, in another namespace, running its image: it runs.",
			objs:   []client.Object{imageDeployment("ops", "eam", "europe-docker.pkg.dev/kyma-project/prod/eventing-auth-manager:v1.4.2", 1)},
			runs:   true,
		},
		"OtherNamesScaledToZero": {
			reason: "The same Deployment with no replicas shows where it ran, and that it stopped.",
			objs:   []client.Object{imageDeployment("ops", "eam", "europe-docker.pkg.dev/kyma-project/prod/eventing-auth-manager:v1.4.2", 0)},
		},
		"BarePodOfItsImage": {
			reason: "A pod of no Deployment, without its labels and without leader election, running its image by digest: it runs.",
			objs: []client.Object{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "eam-0"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "m", Image: "registry.local:5000/eventing-auth-manager@sha256:0123"}}}}},
			runs: true,
		},
		"OtherImageAlike": {
			reason: "An image whose name only contains the operator's is another program: it tells nothing.",
			objs:   []client.Object{imageDeployment("ops", "x", "registry.local/eventing-auth-manager-dashboard:v1", 1)},
			runs:   true, // nothing found of the operator itself
		},
		"ScaledToZeroAndGone": {
			reason: "A Deployment with no replicas, its pods gone, its Lease last renewed a minute ago: stopped.",
			objs:   []client.Object{deployment(0), lease(time.Minute)},
		},
		"LeaseRenewed": {
			reason: "A Lease renewed within its duration: its leader runs, whatever the Deployment is called.",
			objs:   []client.Object{lease(5 * time.Second)},
			runs:   true,
		},
		"DeploymentWithReplicas": {
			reason: "The Deployment of the operator's kustomize name has replicas.",
			objs:   []client.Object{deployment(1)},
			runs:   true,
		},
		"PodRunning": {
			reason: "A pod of the operator still runs, its Deployment already deleted.",
			objs:   []client.Object{pod(corev1.PodRunning)},
			runs:   true,
		},
		"PodEnded": {
			reason: "An ended pod does not run.",
			objs:   []client.Object{pod(corev1.PodSucceeded)},
		},
		"CannotRead": {
			reason: "A Lease that cannot be read tells nothing: not stopped.",
			getErr: forbidden,
			runs:   true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := fakes.Scheme()
			b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objs...)
			if tc.getErr != nil {
				b = b.WithInterceptorFuncs(interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return tc.getErr
				}})
			}
			signs := s
			signs.Named, signs.NeverRan = tc.named, tc.neverRan
			err := operatorStopped(context.Background(), b.Build(), signs, now)
			if diff := cmp.Diff(tc.runs, err != nil); diff != "" {
				t.Errorf("%s\noperatorStopped() = %v; refused: -want +got:\n%s", tc.reason, err, diff)
			}
			if tc.getErr != nil && !errors.Is(err, tc.getErr) {
				t.Errorf("%s\noperatorStopped() = %v, want it to carry %v", tc.reason, err, tc.getErr)
			}
		})
	}
}
