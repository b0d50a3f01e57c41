package migrate

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OperatorSigns are where eventing-auth-manager, as its own kustomize deploys
// it (kyma-project/eventing-auth-manager config/default: namespace kcp-system,
// namePrefix eventing-auth-manager-, commonLabels; config/manager; cmd/main.go's
// leader election ID), shows that it runs.
type OperatorSigns struct {
	Namespace string
	// Deployment is the operator's Deployment.
	Deployment string
	// LeaderLease is the Lease its leader renews while it runs.
	LeaderLease string
	// PodLabels select its pods.
	PodLabels map[string]string
}

// DefaultOperatorSigns are the names eventing-auth-manager's kustomize gives.
func DefaultOperatorSigns() OperatorSigns {
	return OperatorSigns{
		Namespace:   "kcp-system",
		Deployment:  "eventing-auth-manager-controller-manager",
		LeaderLease: "210590f8.kyma-project.io",
		PodLabels:   map[string]string{"app.kubernetes.io/component": "eventing-auth-manager.kyma-project.io", "control-plane": "controller-manager"},
	}
}

// defaultLeaseDuration is controller-runtime's, for a Lease that names none.
const defaultLeaseDuration = 15 * time.Second

// operatorStopped refuses while anything eventing-auth-manager leaves in the
// cluster says that it runs (it would keep reconciling the EventingAuths the
// migration hands over, and delete IAS apps of their names): its leader Lease
// renewed within the lease's duration, its Deployment with replicas, or a pod
// of it not ended. It refuses too when it cannot read one of them: not knowing
// is not "stopped".
func operatorStopped(ctx context.Context, kube client.Reader, s OperatorSigns, now time.Time) error {
	var runs []string
	lease := &coordinationv1.Lease{}
	switch err := kube.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.LeaderLease}, lease); {
	case kerrors.IsNotFound(err):
	case err != nil:
		return cannotTell("its leader Lease "+s.Namespace+"/"+s.LeaderLease, err)
	default:
		d := defaultLeaseDuration
		if lease.Spec.LeaseDurationSeconds != nil {
			d = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
		}
		if r := lease.Spec.RenewTime; r != nil && now.Before(r.Add(d)) {
			holder := ""
			if lease.Spec.HolderIdentity != nil {
				holder = " by " + *lease.Spec.HolderIdentity
			}
			runs = append(runs, fmt.Sprintf("its leader Lease %s/%s was renewed%s at %s, within its %s", s.Namespace, s.LeaderLease, holder, r.UTC().Format(time.RFC3339), d))
		}
	}
	d := &appsv1.Deployment{}
	switch err := kube.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Deployment}, d); {
	case kerrors.IsNotFound(err):
	case err != nil:
		return cannotTell("its Deployment "+s.Namespace+"/"+s.Deployment, err)
	case d.Spec.Replicas == nil || *d.Spec.Replicas > 0 || d.Status.Replicas > 0:
		runs = append(runs, fmt.Sprintf("its Deployment %s/%s has replicas", s.Namespace, s.Deployment))
	}
	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods, client.InNamespace(s.Namespace), client.MatchingLabels(s.PodLabels)); err != nil {
		return cannotTell("its pods in "+s.Namespace, err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			runs = append(runs, fmt.Sprintf("its pod %s/%s is %s", p.Namespace, p.Name, strings.ToLower(string(p.Status.Phase))))
			break
		}
	}
	if len(runs) == 0 {
		return nil
	}
	return fmt.Errorf("eventing-auth-manager still runs: %s. Remove it first (docs/migration.md: at its GitOps source, then `kubectl -n %s delete deployment %s`, scaling it to --replicas=0 lasts only until the next sync), wait until its pods are gone and its Lease is no longer renewed, and run again",
		strings.Join(runs, "; "), s.Namespace, s.Deployment)
}

func cannotTell(what string, err error) error {
	return fmt.Errorf("cannot tell whether eventing-auth-manager still runs: reading %s failed: %w; the migration does not run beside it. Grant the read, or, once you made sure it is removed (docs/migration.md), pass --skip-operator-check", what, err)
}
