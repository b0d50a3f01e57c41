package migrate

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OperatorSigns are where eventing-auth-manager shows that it runs, or that it
// ran: by default the names its own kustomize gives
// (kyma-project/eventing-auth-manager config/default: namespace kcp-system,
// namePrefix eventing-auth-manager-, commonLabels; config/manager; cmd/main.go's
// leader election ID), and, in every namespace, any Deployment or pod that runs
// its image.
type OperatorSigns struct {
	Namespace string
	// Deployment is the operator's Deployment.
	Deployment string
	// LeaderLease is the Lease its leader renews while it runs.
	LeaderLease string
	// PodLabels select its pods.
	PodLabels map[string]string
	// Image is the name of its image's repository (the last element of the
	// path): a Deployment or pod running it is the operator, whatever its
	// names and namespace.
	Image string
	// Named says that the user named where the operator ran: nothing of it
	// found there is taken as its removal.
	Named bool
	// NeverRan says that the user knows no eventing-auth-manager ever ran on
	// this cluster: finding none of it is then no reason to refuse.
	NeverRan bool
}

// DefaultOperatorSigns are the names eventing-auth-manager's kustomize gives.
func DefaultOperatorSigns() OperatorSigns {
	return OperatorSigns{
		Namespace:   "kcp-system",
		Deployment:  "eventing-auth-manager-controller-manager",
		LeaderLease: "210590f8.kyma-project.io",
		PodLabels:   map[string]string{"app.kubernetes.io/component": "eventing-auth-manager.kyma-project.io", "control-plane": "controller-manager"},
		Image:       "eventing-auth-manager",
	}
}

// defaultLeaseDuration is controller-runtime's, for a Lease that names none.
const defaultLeaseDuration = 15 * time.Second

// operatorSeen is what one look at the cluster found of the operator.
type operatorSeen struct {
	// runs are the signs that it runs.
	runs []string
	// ran are the signs that it ran and no longer does.
	ran []string
}

// operatorStopped refuses while anything eventing-auth-manager leaves in the
// cluster says that it runs (it would keep reconciling the EventingAuths the
// migration hands over, and delete IAS apps of their names): its leader Lease
// renewed within the lease's duration, a Deployment of its name or image with
// replicas, or a pod of its labels or image not ended. It refuses too when it
// cannot read one of them (not knowing is not "stopped"), and when it finds
// nothing of the operator at all, unless told where it ran or that it never
// ran: finding nothing under the default names is no proof.
func operatorStopped(ctx context.Context, kube client.Reader, s OperatorSigns, now time.Time) error {
	seen, err := lookForOperator(ctx, kube, s, now)
	if err != nil {
		return err
	}
	if len(seen.runs) > 0 {
		return fmt.Errorf("eventing-auth-manager still runs: %s. Remove it first (docs/migration.md: at its GitOps source, then `kubectl -n %s delete deployment %s`, scaling it to --replicas=0 lasts only until the next sync), wait until its pods are gone and its Lease is no longer renewed, and run again",
			strings.Join(seen.runs, "; "), s.Namespace, s.Deployment)
	}
	if len(seen.ran) == 0 && !s.Named && !s.NeverRan {
		return fmt.Errorf("found no sign of eventing-auth-manager: no Lease %s/%s, no Deployment %s/%s, no pod labelled %s in %s, and no Deployment or pod in any namespace running an image named %q. "+
			"Finding nothing under these names is no proof that it stopped: it may run under others. Name where it ran (--operator-deployment, --operator-lease, --operator-pod-labels, --operator-image), "+
			"or pass --operator-never-ran if no eventing-auth-manager ever ran on this cluster",
			s.Namespace, s.LeaderLease, s.Namespace, s.Deployment, labelsString(s.PodLabels), s.Namespace, s.Image)
	}
	return nil
}

// lookForOperator reads every sign of the operator.
func lookForOperator(ctx context.Context, kube client.Reader, s OperatorSigns, now time.Time) (operatorSeen, error) {
	seen := operatorSeen{}
	lease := &coordinationv1.Lease{}
	switch err := kube.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.LeaderLease}, lease); {
	case kerrors.IsNotFound(err):
	case err != nil:
		return seen, cannotTell("its leader Lease "+s.Namespace+"/"+s.LeaderLease, err)
	default:
		d := defaultLeaseDuration
		if lease.Spec.LeaseDurationSeconds != nil {
			d = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
		}
		holder := ""
		if lease.Spec.HolderIdentity != nil {
			holder = " by " + *lease.Spec.HolderIdentity
		}
		r := lease.Spec.RenewTime
		switch {
		case r != nil && now.Before(r.Add(d)):
			seen.runs = append(seen.runs, fmt.Sprintf("its leader Lease %s/%s was renewed%s at %s, within its %s", s.Namespace, s.LeaderLease, holder, r.UTC().Format(time.RFC3339), d))
		default:
			seen.ran = append(seen.ran, fmt.Sprintf("its leader Lease %s/%s is no longer renewed", s.Namespace, s.LeaderLease))
		}
	}
	deployments := &appsv1.DeploymentList{}
	if err := kube.List(ctx, deployments); err != nil {
		return seen, cannotTell("the Deployments of every namespace", err)
	}
	for i := range deployments.Items {
		d := &deployments.Items[i]
		named := d.Namespace == s.Namespace && d.Name == s.Deployment
		if !named && !runsImage(d.Spec.Template.Spec, s.Image) {
			continue
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas > 0 || d.Status.Replicas > 0 {
			seen.runs = append(seen.runs, fmt.Sprintf("its Deployment %s/%s has replicas", d.Namespace, d.Name))
		} else {
			seen.ran = append(seen.ran, fmt.Sprintf("its Deployment %s/%s has none", d.Namespace, d.Name))
		}
	}
	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods); err != nil {
		return seen, cannotTell("the pods of every namespace", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		labelled := p.Namespace == s.Namespace && len(s.PodLabels) > 0 && hasLabels(p.Labels, s.PodLabels)
		if !labelled && !runsImage(p.Spec, s.Image) {
			continue
		}
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			seen.runs = append(seen.runs, fmt.Sprintf("its pod %s/%s is %s", p.Namespace, p.Name, strings.ToLower(string(p.Status.Phase))))
		} else {
			seen.ran = append(seen.ran, fmt.Sprintf("its pod %s/%s ended", p.Namespace, p.Name))
		}
	}
	return seen, nil
}

// runsImage tells whether a pod spec runs a container of the image named
// image: its repository's last path element, with any tag or digest.
func runsImage(spec corev1.PodSpec, image string) bool {
	if image == "" {
		return false
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			ref, _, _ := strings.Cut(c.Image, "@")
			name := path.Base(ref)
			if i := strings.LastIndex(name, ":"); i >= 0 {
				name = name[:i]
			}
			if name == image {
				return true
			}
		}
	}
	return false
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func labelsString(l map[string]string) string {
	out := make([]string, 0, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		out = append(out, k+"="+l[k])
	}
	return strings.Join(out, ",")
}

func cannotTell(what string, err error) error {
	return fmt.Errorf("cannot tell whether eventing-auth-manager still runs: reading %s failed: %w; the migration does not run beside it. Grant the read, or, once you made sure it is removed (docs/migration.md), pass --skip-operator-check", what, err)
}

// operatorGuard looks again, before each change the migration makes, whether
// the operator came back (a GitOps sync that restores it): at most once per
// every, so that a run over thousands of runtimes reads the cluster's
// Deployments and pods every few seconds, not once per runtime.
type operatorGuard struct {
	kube  client.Reader
	signs OperatorSigns
	every time.Duration
	now   func() time.Time

	mu     sync.Mutex
	last   time.Time
	failed error
}

// stillStopped returns the error that stops the run once the operator shows
// again; a failure sticks.
func (g *operatorGuard) stillStopped(ctx context.Context) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failed != nil {
		return g.failed
	}
	if now := g.now(); now.Sub(g.last) >= g.every {
		seen, err := lookForOperator(ctx, g.kube, g.signs, now)
		switch {
		case err != nil:
			g.failed = err
		case len(seen.runs) > 0:
			g.failed = fmt.Errorf("eventing-auth-manager came back while the migration ran: %s. The migration stopped and changed nothing more; remove the operator again (docs/migration.md) and run again: prepared runtimes are picked up where they are",
				strings.Join(seen.runs, "; "))
		}
		g.last = now
	}
	return g.failed
}
