package migrate

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	kmeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
)

// operatorCRD is eventing-auth-manager's EventingAuth CRD, as it ships it
// (its config/crd), restored on the way back if it was deleted.
//
//go:embed operator_eventingauth_crd.yaml
var operatorCRD []byte

// compositeCRD is the CRD Crossplane makes of the EventingAuth XRD.
var compositeCRD = "eventingauths." + eventingauth.Kind.Group

// Back hands the runtimes the provider serves back to eventing-auth-manager,
// changing no runtime's Secret and deleting no IAS app. The operator does
// nothing more with a runtime whose Secret exists (it reads it, finds it, and
// is done) and never renews a secret: a runtime is handed back only if the
// secret it holds is one of its app's that never expires. For each runtime
// with a Kyma CR it removes the provider's EventingAuth (the provider keeps
// the app, its secrets and the runtime's Secret for a Kyma CR that lives) and,
// once the provider let go of it, makes eventing-auth-manager's EventingAuth
// as the operator's own Kyma controller makes it, with the operator's CRD if
// it is gone. Afterwards the operator is started. To go forward again, the
// operator is removed and the Configuration installed again: the provider
// takes every runtime up from the connection Secret it kept, unchanged, and
// the migration removes the operator's EventingAuths.
func Back(ctx context.Context, o Options) ([]Result, error) {
	if err := compositeGoing(ctx, o.Kube); err != nil {
		return nil, err
	}
	kymas := &unstructured.UnstructuredList{}
	kymas.SetGroupVersionKind(eventingauth.KymaKind.GroupVersion().WithKind(eventingauth.KymaKind.Kind + "List"))
	if err := o.Kube.List(ctx, kymas, client.InNamespace(o.Namespace)); err != nil {
		return nil, fmt.Errorf("cannot list the Kyma CRs in %s: %w", o.Namespace, err)
	}
	if !o.DryRun {
		if err := restoreOperatorCRD(ctx, o.Kube); err != nil {
			return nil, err
		}
	}
	return eachUntilSettled(ctx, o, kymas.Items, func(ctx context.Context, kyma *unstructured.Unstructured) (Result, error) {
		return backOne(ctx, o, kyma), nil
	})
}

// compositeGoing refuses while the EventingAuth definition is installed: the
// kyma bridge would make every EventingAuth the way back removes again.
// Crossplane marks the XRD's deletion first and deletes its CRD only once no
// EventingAuth is left.
func compositeGoing(ctx context.Context, kube client.Reader) error {
	refused := fmt.Errorf("the EventingAuth Configuration is still installed (CompositeResourceDefinition %s): the kyma bridge would make every EventingAuth the way back removes again. "+
		"Remove it first (kubectl delete configuration configuration-eventing-auth), with the provider still running, and run again", compositeCRD)
	xrd := &metav1.PartialObjectMetadata{}
	xrd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositeResourceDefinition"})
	switch err := kube.Get(ctx, client.ObjectKey{Name: compositeCRD}, xrd); {
	case err == nil && xrd.GetDeletionTimestamp() != nil:
		return nil
	case err == nil:
		return refused
	case !kerrors.IsNotFound(err) && !kmeta.IsNoMatchError(err) && !runtime.IsNotRegisteredError(err):
		return fmt.Errorf("cannot read CompositeResourceDefinition %s: %w", compositeCRD, err)
	}
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	switch err := kube.Get(ctx, client.ObjectKey{Name: compositeCRD}, crd); {
	case kerrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("cannot read CustomResourceDefinition %s: %w", compositeCRD, err)
	case crd.GetDeletionTimestamp() == nil:
		return refused
	}
	return nil
}

// restoreOperatorCRD creates eventing-auth-manager's CRD where it is gone.
func restoreOperatorCRD(ctx context.Context, kube client.Client) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(operatorCRD, crd); err != nil {
		return fmt.Errorf("cannot read eventing-auth-manager's CRD: %w", err)
	}
	if err := kube.Create(ctx, crd); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot restore eventing-auth-manager's CRD %s: %w", crd.Name, err)
	}
	return nil
}

// backOne takes one runtime one step back.
func backOne(ctx context.Context, o Options, kyma *unstructured.Unstructured) Result {
	id := kyma.GetName()
	if kyma.GetDeletionTimestamp() != nil {
		return Result{Runtime: id, Outcome: LeftAlone, Detail: "its Kyma CR is being deleted"}
	}
	// What the operator would keep is read first: a runtime it could not keep
	// stays with the provider, its EventingAuth untouched.
	s := &state{id: id}
	if why, err := s.readServedRuntimeBack(ctx, o); err != nil || why != "" {
		if err != nil {
			return Result{Runtime: id, Outcome: Waiting, Detail: err.Error()}
		}
		return Result{Runtime: id, Outcome: LeftAlone, Detail: why + "; it stays with the provider"}
	}
	if why, err := s.keepable(ctx, o); err != nil || why != "" {
		if err != nil {
			return Result{Runtime: id, Outcome: Waiting, Detail: err.Error()}
		}
		return Result{Runtime: id, Outcome: LeftAlone, Detail: why + "; it stays with the provider"}
	}
	if waiting, why, err := providerLetGo(ctx, o, id); err != nil || why != "" || waiting != "" {
		switch {
		case err != nil:
			return Result{Runtime: id, Outcome: Waiting, Detail: err.Error()}
		case why != "":
			return Result{Runtime: id, Outcome: LeftAlone, Detail: why}
		}
		return Result{Runtime: id, Outcome: Waiting, Detail: waiting}
	}
	plan := fmt.Sprintf("eventing-auth-manager's EventingAuth %s/%s made; it finds the runtime's Secret (IAS application %s, client secret %s…, no expiry) and leaves it and IAS as they are; the connection Secret %s-ias, kept for the way forward, goes with the Kyma CR", o.Namespace, id, s.app.ID, s.secret.Hint, id)
	if o.DryRun {
		return Result{Runtime: id, Outcome: WouldPrepare, Detail: plan}
	}
	if err := handBack(ctx, o, kyma); err != nil {
		return Result{Runtime: id, Outcome: Waiting, Detail: err.Error()}
	}
	return Result{Runtime: id, Outcome: Completed, Detail: plan}
}

// providerLetGo removes the provider's EventingAuth of runtime id and says
// what the runtime waits for until the provider let go of it: its
// IASApplication and RuntimeSecret gone, their app and Secret kept. A
// hand-made IASApplication or RuntimeSecret would delete them when deleted:
// such a runtime is left alone.
func providerLetGo(ctx context.Context, o Options, id string) (waiting, why string, err error) {
	key := client.ObjectKey{Namespace: o.Namespace, Name: id}
	xr := &unstructured.Unstructured{}
	xr.SetGroupVersionKind(eventingauth.Kind)
	switch err := o.Kube.Get(ctx, key, xr); {
	case err == nil:
		if xr.GetDeletionTimestamp() == nil && !o.DryRun {
			if err := o.Kube.Delete(ctx, xr); client.IgnoreNotFound(err) != nil {
				return "", "", fmt.Errorf("cannot delete the provider's EventingAuth: %w", err)
			}
		}
		return "the provider's EventingAuth to go (its app and Secret are kept)", "", nil
	case !kerrors.IsNotFound(err) && !isNoKind(err):
		return "", "", fmt.Errorf("cannot read the provider's EventingAuth: %w", err)
	}
	for _, mr := range []client.Object{&iasv1alpha1.IASApplication{}, &runtimev1alpha1.RuntimeSecret{}} {
		switch err := o.Kube.Get(ctx, key, mr); {
		case kerrors.IsNotFound(err) || isNoKind(err):
			continue
		case err != nil:
			return "", "", fmt.Errorf("cannot read %T %s: %w", mr, id, err)
		}
		kind := strings.TrimPrefix(fmt.Sprintf("%T", mr), "*v1alpha1.")
		if _, composed := mr.GetLabels()["crossplane.io/composite"]; !composed {
			return "", fmt.Sprintf("the hand-made %s %s/%s serves the runtime: deleting it would delete what it manages; hand it over or delete it first", kind, o.Namespace, id), nil
		}
		return fmt.Sprintf("the provider to let go of %s %s (its deletion keeps what it manages)", kind, id), "", nil
	}
	return "", "", nil
}

// readServedRuntimeBack reads the runtime's Secret, which the operator finds
// and keeps: without it the operator would make a new app and Secret.
func (s *state) readServedRuntimeBack(ctx context.Context, o Options) (string, error) {
	if err := s.readServedRuntime(ctx, o); err != nil {
		return "", err
	}
	if s.onRuntime == nil {
		return fmt.Sprintf("the runtime holds no Secret %s/%s: eventing-auth-manager would make a new app and Secret; the provider had not served it", runtimeSecretNamespace, runtimeSecretName), nil
	}
	for _, k := range iasv1alpha1.ConnectionKeys {
		if len(s.onRuntime.Data[k]) == 0 {
			return fmt.Sprintf("the runtime's Secret lacks %s: Kyma's eventing manager cannot use it", k), nil
		}
	}
	return "", nil
}

// keepable finds the app and the api secret the runtime holds, and checks
// that the operator can keep them: one app of the runtime's name, and a
// secret of it that never expires.
func (s *state) keepable(ctx context.Context, o Options) (string, error) {
	if why, err := s.readIAS(ctx, o); why != "" || err != nil {
		return why, err
	}
	if why, err := s.heldSecret(ctx, o); why != "" || err != nil {
		return why, err
	}
	if v := s.secret.ValidTo; v != nil {
		return fmt.Sprintf("the runtime's client secret %s… expires at %s, and eventing-auth-manager never renews a secret: the runtime would lose its eventing then. Remove the secretRotation (and any validFor) while the provider serves the runtime: it replaces the secret with one without expiry (docs/migration.md), then run again",
			s.secret.Hint, v.UTC().Format(time.RFC3339)), nil
	}
	return "", nil
}

// handBack makes eventing-auth-manager's EventingAuth for the Kyma CR, as the
// operator's Kyma controller makes it (same name and namespace, controlled by
// the Kyma CR). The connection Secret the provider kept stays, owned by the
// Kyma CR, so that it goes with the runtime while the operator serves it, and
// the IASApplication made again when the provider takes the runtime back
// finds the client secret in it and changes nothing.
func handBack(ctx context.Context, o Options, kyma *unstructured.Unstructured) error {
	owner := metav1.OwnerReference{APIVersion: eventingauth.KymaKind.GroupVersion().String(), Kind: eventingauth.KymaKind.Kind, Name: kyma.GetName(), UID: kyma.GetUID()}
	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(OperatorEventingAuthGroupVersionKind)
	old.SetNamespace(kyma.GetNamespace())
	old.SetName(kyma.GetName())
	controller := owner
	controller.Controller, controller.BlockOwnerDeletion = ptr.To(true), ptr.To(true)
	old.SetOwnerReferences([]metav1.OwnerReference{controller})
	if err := o.Kube.Create(ctx, old); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot make eventing-auth-manager's EventingAuth: %w", err)
	}
	conn := &corev1.Secret{}
	err := o.Kube.Get(ctx, client.ObjectKey{Namespace: kyma.GetNamespace(), Name: kyma.GetName() + "-ias"}, conn)
	switch {
	case kerrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("cannot read the connection Secret: %w", err)
	case metav1.GetControllerOf(conn) != nil || slices.ContainsFunc(conn.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == owner.UID }):
		return nil
	}
	conn.OwnerReferences = append(conn.OwnerReferences, owner)
	if err := o.Kube.Update(ctx, conn); err != nil {
		return fmt.Errorf("cannot give the connection Secret to the Kyma CR: %w", err)
	}
	return nil
}

// isNoKind tells a kind the API server does not serve (the provider's CRDs
// removed with its package).
func isNoKind(err error) bool { return kmeta.IsNoMatchError(err) }
