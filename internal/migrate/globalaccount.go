package migrate

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
)

// OperatorGlobalAccountFlag is eventing-auth-manager's flag of the global
// account it sends with every app; eventing-auth-migrate takes the same name.
const OperatorGlobalAccountFlag = "ias-global-account-id"

// OperatorGlobalAccount reads the value of eventing-auth-manager's
// --ias-global-account-id from its Deployment, which may be scaled to zero;
// found is false when the Deployment is gone. A Deployment without the flag ran
// without one: "".
func OperatorGlobalAccount(ctx context.Context, kube client.Reader, s OperatorSigns) (value string, found bool, err error) {
	d := &appsv1.Deployment{}
	switch err := kube.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Deployment}, d); {
	case kerrors.IsNotFound(err):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("cannot read eventing-auth-manager's Deployment %s/%s for its --%s: %w", s.Namespace, s.Deployment, OperatorGlobalAccountFlag, err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		args := append(append([]string{}, c.Command...), c.Args...)
		for i, a := range args {
			name, v, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !strings.HasPrefix(a, "-") || name != OperatorGlobalAccountFlag {
				continue
			}
			if !hasValue && i+1 < len(args) {
				v = args[i+1]
			}
			return v, true, nil
		}
	}
	return "", true, nil
}

// carryGlobalAccount makes the ClusterProviderConfig send the global account
// eventing-auth-manager sent, so that a runtime created after the migration
// gets the app the operator would have made: it sets the config's
// globalAccount where it is empty, and refuses where it names another.
func carryGlobalAccount(ctx context.Context, o Options) (string, error) {
	if o.GlobalAccount == nil {
		return "", nil
	}
	want := *o.GlobalAccount
	pc := &v1alpha1.ClusterProviderConfig{}
	if err := o.Kube.Get(ctx, types.NamespacedName{Name: o.ProviderConfig}, pc); err != nil {
		return "", fmt.Errorf("cannot read ClusterProviderConfig %s: %w", o.ProviderConfig, err)
	}
	switch have := pc.Spec.GlobalAccount; {
	case have == want:
		return "", nil
	case have != "":
		return "", fmt.Errorf("ClusterProviderConfig %s sends globalAccount %q, but eventing-auth-manager sent %q (--%s): new runtimes would get other apps than the operator made. Set spec.globalAccount to %q, or pass --%s with the value the operator ran with",
			o.ProviderConfig, have, want, OperatorGlobalAccountFlag, want, OperatorGlobalAccountFlag)
	}
	if o.DryRun {
		return fmt.Sprintf("would set ClusterProviderConfig %s's globalAccount to %q, as eventing-auth-manager's --%s", o.ProviderConfig, want, OperatorGlobalAccountFlag), nil
	}
	patch := client.MergeFrom(pc.DeepCopy())
	pc.Spec.GlobalAccount = want
	if err := o.Kube.Patch(ctx, pc, patch); err != nil {
		return "", fmt.Errorf("cannot set ClusterProviderConfig %s's globalAccount: %w", o.ProviderConfig, err)
	}
	return fmt.Sprintf("set ClusterProviderConfig %s's globalAccount to %q, as eventing-auth-manager's --%s", o.ProviderConfig, want, OperatorGlobalAccountFlag), nil
}
