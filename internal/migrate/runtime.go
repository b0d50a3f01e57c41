package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kyma-project/provider-eventing-auth/apis"
	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
)

// Where the old operator and the provider keep a runtime's credentials.
const (
	runtimeSecretNamespace = "kyma-system"
	runtimeSecretName      = "eventing-webhook-auth"
	kubeconfigKey          = "config"
)

// state is what the clusters and IAS hold for one runtime.
type state struct {
	id   string
	old  *unstructured.Unstructured
	kyma *metav1.PartialObjectMetadata
	// app and secret are the IAS app and the api secret the runtime holds.
	app    ias.Application
	secret ias.APISecret
	// onRuntime is the runtime's Secret, read through runtime.
	onRuntime *corev1.Secret
	runtime   corev1client.SecretsGetter
	// conn and xr are the provider's objects, nil while they do not exist.
	conn *corev1.Secret
	xr   *unstructured.Unstructured
	// served says the kyma bridge made the EventingAuth without the
	// migration: the provider serves the runtime with an app and a secret
	// of its own, and the migration only finishes it.
	served bool
}

func (s *state) connName() string { return s.id + "-ias" }

// inspect reads one runtime's state. A state that does not fit is returned as
// why; an error is something to retry (an unreachable runtime, IAS down).
func inspect(ctx context.Context, o Options, old *unstructured.Unstructured) (*state, string, error) {
	s := &state{id: old.GetName(), old: old}
	if old.GetDeletionTimestamp() != nil {
		return nil, "eventing-auth-manager's EventingAuth is being deleted", nil
	}
	s.kyma = &metav1.PartialObjectMetadata{}
	s.kyma.SetGroupVersionKind(eventingauth.KymaKind)
	if err := o.Kube.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: s.id}, s.kyma); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, fmt.Sprintf("there is no Kyma CR %s/%s, so the provider would keep no EventingAuth for it", o.Namespace, s.id), nil
		}
		return nil, "", fmt.Errorf("cannot read Kyma CR: %w", err)
	}
	if why, err := s.readProviderObjects(ctx, o); why != "" || err != nil {
		return nil, why, err
	}
	if s.served {
		return s, "", s.readServedRuntime(ctx, o)
	}
	if why, err := s.readIAS(ctx, o); why != "" || err != nil {
		return nil, why, err
	}
	if why, err := s.readRuntime(ctx, o); why != "" || err != nil {
		return nil, why, err
	}
	if why, err := s.matchSecret(ctx, o); why != "" || err != nil {
		return nil, why, err
	}
	if s.conn != nil && !sameCredentials(s.conn.Data, s.onRuntime.Data) {
		return nil, fmt.Sprintf("the connection Secret %s/%s exists and holds other credentials than the runtime", o.Namespace, s.connName()), nil
	}
	return s, "", nil
}

// readProviderObjects finds what the provider or an earlier run made.
func (s *state) readProviderObjects(ctx context.Context, o Options) (string, error) {
	xr := &unstructured.Unstructured{}
	xr.SetGroupVersionKind(eventingauth.Kind)
	switch err := o.Kube.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: s.id}, xr); {
	case err == nil:
		s.xr = xr
		// The migration marks what it prepares with the secret's marker; the
		// kyma bridge never does.
		_, prepared := xr.GetAnnotations()[apis.AnnotationSecretDescription]
		s.served = !prepared
	case !kerrors.IsNotFound(err):
		return "", fmt.Errorf("cannot read EventingAuth composite: %w", err)
	}
	conn := &corev1.Secret{}
	switch err := o.Kube.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: s.connName()}, conn); {
	case err == nil:
		s.conn = conn
	case !kerrors.IsNotFound(err):
		return "", fmt.Errorf("cannot read connection Secret: %w", err)
	}
	return "", nil
}

// readServedRuntime reads the runtime's Secret, if any, of a runtime the
// provider serves itself; what keeps it from being read is to be retried.
func (s *state) readServedRuntime(ctx context.Context, o Options) error {
	why, err := s.connectRuntime(ctx, o)
	if why != "" {
		return errors.New(why)
	}
	return err
}

// connectRuntime makes a client of the runtime from its kubeconfig Secret and
// reads the runtime's Secret, nil where there is none. A kubeconfig missing
// or refused is said as why.
func (s *state) connectRuntime(ctx context.Context, o Options) (string, error) {
	name := "kubeconfig-" + s.id
	kc := &corev1.Secret{}
	if err := o.Kube.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: name}, kc); err != nil {
		if kerrors.IsNotFound(err) {
			return fmt.Sprintf("the kubeconfig Secret %s/%s is missing", o.Namespace, name), nil
		}
		return "", fmt.Errorf("cannot read kubeconfig Secret: %w", err)
	}
	core, err := o.Runtimes.For(kc.Data[kubeconfigKey])
	if err != nil {
		return fmt.Sprintf("the kubeconfig in %s/%s (key %q): %v", o.Namespace, name, kubeconfigKey, err), nil
	}
	s.runtime = core
	s.onRuntime, err = core.Secrets(runtimeSecretNamespace).Get(ctx, runtimeSecretName, metav1.GetOptions{})
	switch {
	case kerrors.IsNotFound(err):
		s.onRuntime = nil
	case err != nil:
		return "", fmt.Errorf("cannot read the runtime's Secret: %w", err)
	}
	return "", nil
}

// readIAS finds the one app named after the runtime.
func (s *state) readIAS(ctx context.Context, o Options) (string, error) {
	apps, err := o.IAS.FindApplications(ctx, s.id)
	if err != nil {
		return "", err
	}
	switch len(apps) {
	case 0:
		return fmt.Sprintf("there is no IAS application named %s", s.id), nil
	case 1:
	default:
		ids := make([]string, 0, len(apps))
		for _, a := range apps {
			ids = append(ids, a.ID)
		}
		return fmt.Sprintf("%d IAS applications are named %s (%s); keep the one the runtime uses, then run again", len(apps), s.id, strings.Join(ids, ", ")), nil
	}
	var recorded string
	if s.old != nil {
		recorded, _, _ = unstructured.NestedString(s.old.Object, "status", "iasApplication", "uuid")
	}
	if recorded != "" && recorded != apps[0].ID {
		return fmt.Sprintf("the IAS application named %s has UUID %s, but eventing-auth-manager recorded %s", s.id, apps[0].ID, recorded), nil
	}
	s.app = apps[0]
	return "", nil
}

// readRuntime reads the runtime's Secret through its kubeconfig.
func (s *state) readRuntime(ctx context.Context, o Options) (string, error) {
	if why, err := s.connectRuntime(ctx, o); why != "" || err != nil {
		return why, err
	}
	if s.onRuntime == nil {
		return fmt.Sprintf("the Secret %s/%s is missing on the runtime", runtimeSecretNamespace, runtimeSecretName), nil
	}
	if v, ok := s.onRuntime.Labels[runtimev1alpha1.LabelManagedBy]; ok && v != runtimev1alpha1.ManagedBy {
		return fmt.Sprintf("the runtime's Secret is labelled %s=%s", runtimev1alpha1.LabelManagedBy, v), nil
	}
	var keys []string
	for k := range s.onRuntime.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := slices.Clone(iasv1alpha1.ConnectionKeys)
	slices.Sort(want)
	if s.onRuntime.Type != corev1.SecretTypeOpaque || !slices.Equal(keys, want) {
		return fmt.Sprintf("the runtime's Secret (type %s, keys %s) is not the Opaque Secret with keys %s that eventing-auth-manager writes",
			s.onRuntime.Type, strings.Join(keys, ", "), strings.Join(want, ", ")), nil
	}
	return "", nil
}

// matchSecret finds the api secret the runtime holds among the app's secrets
// that carry the old operator's marker, or the provider's on a runtime handed
// back.
func (s *state) matchSecret(ctx context.Context, o Options) (string, error) {
	return s.heldSecret(ctx, o, OperatorSecretDescription, iasv1alpha1.DefaultSecretDescription)
}

// heldSecret finds, among the app's api secrets that carry one of marks (any
// with none), the one whose value the runtime's Secret holds; it says why
// when there is not exactly one.
func (s *state) heldSecret(ctx context.Context, o Options, marks ...string) (string, error) {
	if got := string(s.onRuntime.Data[iasv1alpha1.KeyClientID]); got != s.app.ClientID {
		return fmt.Sprintf("the runtime's Secret holds another client ID than IAS application %s", s.app.ID), nil
	}
	secrets, err := o.IAS.ListAPISecrets(ctx, s.app.ID)
	if err != nil {
		return "", err
	}
	value := string(s.onRuntime.Data[iasv1alpha1.KeyClientSecret])
	var matches []ias.APISecret
	for _, sec := range secrets {
		marked := len(marks) == 0 || slices.Contains(marks, sec.Description)
		if marked && sec.Hint != "" && strings.HasPrefix(value, sec.Hint) && (sec.ClientID == "" || sec.ClientID == s.app.ClientID) {
			matches = append(matches, sec)
		}
	}
	if len(matches) != 1 {
		of := "secrets"
		if len(marks) > 0 {
			quoted := make([]string, 0, len(marks))
			for _, m := range marks {
				quoted = append(quoted, strconv.Quote(m))
			}
			of += " marked " + strings.Join(quoted, " or ")
		}
		return fmt.Sprintf("the runtime's client secret matches %d of IAS application %s's %s, not exactly one", len(matches), s.app.ID, of), nil
	}
	s.secret = matches[0]
	return "", nil
}

// sameCredentials compares the four connection keys.
func sameCredentials(a, b map[string][]byte) bool {
	for _, k := range iasv1alpha1.ConnectionKeys {
		if !bytes.Equal(a[k], b[k]) {
			return false
		}
	}
	return true
}

func (s *state) labelled() bool {
	return s.onRuntime != nil && s.onRuntime.Labels[runtimev1alpha1.LabelManagedBy] == runtimev1alpha1.ManagedBy
}

// label puts the provider's labels on the runtime's Secret, its data as it
// is; the resourceVersion guards against a concurrent write.
func (s *state) label(ctx context.Context) error {
	sec := s.onRuntime.DeepCopy()
	if sec.Labels == nil {
		sec.Labels = map[string]string{}
	}
	// The provider's labels: its own, and the one the runtime-watcher selects.
	maps.Copy(sec.Labels, runtimev1alpha1.SecretLabels())
	if _, err := s.runtime.Secrets(runtimeSecretNamespace).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("cannot label the runtime's Secret: %w", err)
	}
	return nil
}

// prepared tells whether everything the provider needs is in place.
func (s *state) prepared() bool { return s.conn != nil && s.labelled() && s.xr != nil }

// plan says what preparing does.
func (s *state) plan() string {
	return fmt.Sprintf("connection Secret %s from the runtime's Secret; label %s=%s on the runtime's Secret (data unchanged); EventingAuth %s taking over IAS application %s and client secret %s…",
		s.connName(), runtimev1alpha1.LabelManagedBy, runtimev1alpha1.ManagedBy, s.id, s.app.ID, s.secret.Hint)
}

// prepare makes what is missing, the EventingAuth last: it sets the provider
// to work, and finds everything else in place.
func (s *state) prepare(ctx context.Context, o Options) error {
	if s.conn == nil {
		conn := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: s.connName()},
			Type:       resource.SecretTypeConnection,
			Data:       map[string][]byte{},
		}
		for _, k := range iasv1alpha1.ConnectionKeys {
			conn.Data[k] = s.onRuntime.Data[k]
		}
		if err := o.Kube.Create(ctx, conn); err != nil && !kerrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot create connection Secret %s: %w", s.connName(), err)
		}
	}
	if !s.labelled() {
		// Only the label changes: the data, which the eventing manager reads,
		// stays as it is.
		if err := s.label(ctx); err != nil {
			return err
		}
	}
	return s.applyComposite(ctx, o, true)
}

// applyComposite applies the EventingAuth as the kyma bridge would, with the
// migration's annotations; withApp names the app to take over.
func (s *state) applyComposite(ctx context.Context, o Options, withApp bool) error {
	xr := eventingauth.Desired(s.kyma, 0)
	ann := map[string]string{apis.AnnotationSecretDescription: s.secretDescription()}
	if withApp {
		ann[apis.AnnotationApplicationID] = s.app.ID
	}
	xr.SetAnnotations(ann)
	if err := o.Kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(xr), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("cannot apply EventingAuth %s: %w", s.id, err)
	}
	return nil
}

// readiness says what the runtime still waits for; empty once the provider
// shows it Ready with the app and the secret it took over.
func (s *state) readiness(ctx context.Context, o Options) string {
	key := client.ObjectKey{Namespace: o.Namespace, Name: s.id}
	app := &iasv1alpha1.IASApplication{}
	if err := o.Kube.Get(ctx, key, app); err != nil {
		return fmt.Sprintf("the provider to compose IASApplication %s (%v)", s.id, client.IgnoreNotFound(err))
	}
	if !resource.IsConditionTrue(app.GetCondition(xpv2.TypeReady)) {
		return fmt.Sprintf("IASApplication %s to become Ready%s", s.id, because(app.GetCondition(xpv2.TypeReady)))
	}
	if meta.GetExternalName(app) != s.app.ID || app.Status.AtProvider.SecretID != s.secret.ID {
		return fmt.Sprintf("IASApplication %s to publish IAS application %s's secret %s… (it shows application %s, secret %s)",
			s.id, s.app.ID, s.secret.Hint, meta.GetExternalName(app), app.Status.AtProvider.SecretID)
	}
	rs := &runtimev1alpha1.RuntimeSecret{}
	if err := o.Kube.Get(ctx, key, rs); err != nil {
		return fmt.Sprintf("the provider to compose RuntimeSecret %s (%v)", s.id, client.IgnoreNotFound(err))
	}
	if !resource.IsConditionTrue(rs.GetCondition(xpv2.TypeReady)) {
		return fmt.Sprintf("RuntimeSecret %s to become Ready%s", s.id, because(rs.GetCondition(xpv2.TypeReady)))
	}
	return ""
}

// servedResources reads the IASApplication and the RuntimeSecret of a
// runtime the provider serves itself: each is returned once Ready; waitingFor
// says what the first not Ready waits for, failed what a failing Synced
// condition says.
func (s *state) servedResources(ctx context.Context, o Options) (app *iasv1alpha1.IASApplication, rs *runtimev1alpha1.RuntimeSecret, waitingFor, failed string) {
	key := client.ObjectKey{Namespace: o.Namespace, Name: s.id}
	look := func(kind string, mr interface {
		client.Object
		GetCondition(xpv2.ConditionType) xpv2.Condition
	}) bool {
		if err := o.Kube.Get(ctx, key, mr); err != nil {
			waitingFor = fmt.Sprintf("the provider to compose %s %s (%v)", kind, s.id, client.IgnoreNotFound(err))
			return false
		}
		if c := mr.GetCondition(xpv2.TypeSynced); c.Status == corev1.ConditionFalse {
			failed = fmt.Sprintf("%s %s says: %s", kind, s.id, c.Message)
			return false
		}
		if !resource.IsConditionTrue(mr.GetCondition(xpv2.TypeReady)) {
			waitingFor = fmt.Sprintf("%s %s to become Ready%s", kind, s.id, because(mr.GetCondition(xpv2.TypeReady)))
			return false
		}
		return true
	}
	a := &iasv1alpha1.IASApplication{}
	if !look("IASApplication", a) {
		return nil, nil, waitingFor, failed
	}
	r := &runtimev1alpha1.RuntimeSecret{}
	if !look("RuntimeSecret", r) {
		// Not ready or failing: the operator's Secret, not the provider's, is
		// what a RuntimeSecret fails on before the label; labelling fixes it.
		return a, nil, waitingFor, ""
	}
	return a, r, "", ""
}

// because quotes a condition's message; none yet means the provider has not
// looked at the resource (is it running?).
func because(c xpv2.Condition) string {
	if c.Message == "" {
		return " (no message yet: is the provider running?)"
	}
	return ": " + c.Message
}

// secretDescription is the marker of the secret the runtime holds, which the
// provider takes up as its own: the operator's, or the provider's own on a
// runtime handed back to the operator before.
func (s *state) secretDescription() string {
	if s.secret.Description != "" {
		return s.secret.Description
	}
	if s.xr != nil {
		return s.xr.GetAnnotations()[apis.AnnotationSecretDescription]
	}
	return OperatorSecretDescription
}

// removeOld removes eventing-auth-manager's EventingAuth: its finalizer, which
// no operator removes any more, then the object.
func (s *state) removeOld(ctx context.Context, o Options) error {
	old := s.old.DeepCopy()
	if controllerutil.RemoveFinalizer(old, OperatorFinalizer) {
		if err := o.Kube.Update(ctx, old); err != nil {
			return fmt.Errorf("cannot remove eventing-auth-manager's finalizer: %w", err)
		}
	}
	if err := o.Kube.Delete(ctx, old); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("cannot delete eventing-auth-manager's EventingAuth: %w", err)
	}
	return nil
}

// finish hands the rest over to the provider and removes the old operator's
// EventingAuth: the connection Secret goes with the IASApplication from now on,
// the app is found by the external name the provider recorded, and the old
// object no longer waits for an operator that does not run.
func (s *state) finish(ctx context.Context, o Options) error {
	app := &iasv1alpha1.IASApplication{}
	if err := o.Kube.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: s.id}, app); err != nil {
		return err
	}
	if !metav1.IsControlledBy(s.conn, app) {
		// The owner reference the provider gives a connection Secret it creates.
		conn := s.conn.DeepCopy()
		conn.OwnerReferences = append(conn.OwnerReferences, meta.AsController(meta.TypedReferenceTo(app, iasv1alpha1.IASApplicationGroupVersionKind)))
		if err := o.Kube.Update(ctx, conn); err != nil {
			return fmt.Errorf("cannot hand connection Secret %s to IASApplication %s: %w", s.connName(), s.id, err)
		}
	}
	if err := s.applyComposite(ctx, o, false); err != nil {
		return err
	}
	return s.removeOld(ctx, o)
}
