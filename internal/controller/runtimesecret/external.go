package runtimesecret

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/breaker"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/reconciler"
)

// fieldManager names the provider's writes in a Secret's managedFields, so
// that a fight's Warning can name the other writer.
const fieldManager = "provider-eventing-auth"

// DefaultUnreachableDeletion is how long a deletion waits for a runtime that
// does not answer before it completes without removing the runtime's Secret.
const DefaultUnreachableDeletion = time.Hour

// RuntimeClients hands out a client for the runtime a kubeconfig points at
// (kymaruntime.Clients, cached per digest), and recalls into the runtime's
// circuit a failure a condition recorded.
type RuntimeClients interface {
	For(kubeconfig []byte) (corev1client.CoreV1Interface, error)
	Recall(ctx context.Context, kubeconfig []byte, f breaker.Failure)
}

// RuntimeClientsFn is a RuntimeClients of a function, without circuits.
type RuntimeClientsFn func(kubeconfig []byte) (corev1client.CoreV1Interface, error)

// For calls fn.
func (fn RuntimeClientsFn) For(kubeconfig []byte) (corev1client.CoreV1Interface, error) {
	return fn(kubeconfig)
}

// Recall does nothing: fn has no circuits.
func (fn RuntimeClientsFn) Recall(context.Context, []byte, breaker.Failure) {}

type connector struct {
	kube     client.Reader
	clients  RuntimeClients
	recorder event.Recorder
	// unreachableDeletion is how long a deletion waits for a runtime that
	// does not answer.
	unreachableDeletion time.Duration
	watcher             Watcher
	deleted             *deletedSecrets
}

// Connect reads the runtime's kubeconfig. A missing kubeconfig Secret is not
// an error here: Observe decides what it means. The runtime's client is taken
// from the cache, or built, only when a call to the runtime is made (see
// external.secrets).
func (c *connector) Connect(ctx context.Context, cr *v1alpha1.RuntimeSecret) (managed.TypedExternalClient[*v1alpha1.RuntimeSecret], error) {
	name, key := cr.KubeconfigSecret()
	e := &external{kube: c.kube, recorder: c.recorder, kubeconfig: cr.GetNamespace() + "/" + name, kubeconfigKey: key,
		unreachableDeletion: c.unreachableDeletion, now: time.Now, watcher: c.watcher, clients: c.clients, deleted: c.deleted}
	s := &corev1.Secret{}
	err := c.kube.Get(ctx, types.NamespacedName{Namespace: cr.GetNamespace(), Name: name}, s)
	switch {
	case kerrors.IsNotFound(err):
		return e, nil
	case err != nil:
		return nil, errors.Wrapf(err, errReadKubeconfig, e.kubeconfig)
	}
	if e.kubeconfigData = s.Data[key]; len(e.kubeconfigData) == 0 {
		return nil, errors.Errorf(errKubeconfigKey, e.kubeconfig, key)
	}
	if f, ok := reconciler.RecalledFailure(cr); ok {
		e.recalled = &f
	}
	return e, nil
}

// secrets is the runtime's Secrets client. It is taken from the cache of
// runtime clients, or built, on the first call to the runtime: a reconcile
// that only waits for its IASApplication builds none. A client is its parsed
// kubeconfig and TLS set-up, and with many runtimes made at once (more than
// the cache holds) each waiting reconcile built one again.
func (e *external) secrets(ctx context.Context, ns string) (corev1client.SecretInterface, error) {
	if e.runtime == nil {
		c, err := e.clients.For(e.kubeconfigData)
		if err != nil {
			return nil, errors.Wrapf(err, errKubeconfigRefused, e.kubeconfig, e.kubeconfigKey)
		}
		if e.recalled != nil {
			// After a restart: the runtime failed when last tried.
			e.clients.Recall(ctx, e.kubeconfigData, *e.recalled)
		}
		e.runtime = c
	}
	return e.runtime.Secrets(ns), nil
}

// external reconciles one RuntimeSecret with its runtime. It lives for one
// reconcile, so Observe may leave what it read for Create, Update and Delete.
type external struct {
	kube          client.Reader
	recorder      event.Recorder
	kubeconfig    string // namespace/name of the kubeconfig Secret
	kubeconfigKey string

	kubeconfigData []byte // nil: no kubeconfig Secret
	clients        RuntimeClients
	runtime        corev1client.SecretsGetter // built on the first call (secrets)
	// recalled is the runtime's failure the resource's condition recorded,
	// recalled into its circuit once its client is built; nil: none.
	recalled *breaker.Failure

	unreachableDeletion time.Duration
	now                 func() time.Time
	watcher             Watcher
	deleted             *deletedSecrets

	want    map[string][]byte // desired data
	current *corev1.Secret    // the Secret on the runtime, if it exists
	// wasReady is the Ready condition as the reconcile found it: a repair
	// that ends where it began keeps it, transition time and all, so the
	// status is not written for it.
	wasReady xpv2.Condition
}

func (e *external) Observe(ctx context.Context, cr *v1alpha1.RuntimeSecret) (managed.ExternalObservation, error) {
	// What the runtime held when last seen, before this observation replaces it.
	last := e.record(cr)
	fromEvent := e.watcher.TookEvent(client.ObjectKeyFromObject(cr))
	if meta.WasDeleted(cr) {
		return e.observeDeletion(ctx, cr)
	}
	ns, name := cr.TargetSecret()
	id := cr.Spec.ForProvider.RuntimeID
	if e.kubeconfigData == nil && e.runtime == nil {
		return e.wait(cr, fmt.Sprintf("the kubeconfig Secret %s (key %q)", e.kubeconfig, e.kubeconfigKey))
	}
	want, waitingFor, err := e.desired(ctx, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if waitingFor != "" {
		return e.wait(cr, waitingFor)
	}
	e.want = want
	cur, err := e.target(ctx, cr)
	if err != nil && answerDue(cr, err) {
		// Nothing known changed, and the answer is due within seconds, when
		// the reconcile comes back (reconciler.PollsLast): telling of the wait
		// would write a Ready resource's status twice, for every runtime that
		// is slow to answer its first call after a start.
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	if err != nil {
		return managed.ExternalObservation{}, e.readError(cr, err)
	}
	if cur == nil {
		return e.observeMissing(cr, last, fromEvent), nil
	}
	if err := ours(cur, id); err != nil {
		cr.SetConditions(xpv2.Unavailable().WithMessage(err.Error()))
		return managed.ExternalObservation{}, err
	}
	e.current = cur
	cr.Status.AtProvider.DataHash = v1alpha1.DataHash(cur.Data)
	e.changedBySomeoneElse(cr, last, cur, fromEvent)
	diff := strings.Join(differences(cur, e.want), ", ")
	if diff == "" {
		cr.SetConditions(xpv2.Available())
	} else {
		cr.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf("Secret %s/%s on runtime %s differs (%s); restoring it", ns, name, id, diff)))
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: diff == "", Diff: diff}, nil
}

// record notes in the status which runtime and Secret the resource writes,
// and what Ready said before this observation; it returns the digest of what
// the runtime held when last seen.
func (e *external) record(cr *v1alpha1.RuntimeSecret) (last string) {
	ns, name := cr.TargetSecret()
	at := &cr.Status.AtProvider
	e.wasReady = cr.GetCondition(xpv2.TypeReady)
	at.ClusterID, at.NamespacedName = cr.Spec.ForProvider.RuntimeID, secretName(ns, name)
	return at.DataHash
}

// target reads the Secret on the runtime; nil if there is none.
func (e *external) target(ctx context.Context, cr *v1alpha1.RuntimeSecret) (*corev1.Secret, error) {
	ns, name := cr.TargetSecret()
	secrets, err := e.secrets(ctx, ns)
	if err != nil {
		return nil, err
	}
	cur, err := secrets.Get(ctx, name, metav1.GetOptions{})
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	return cur, err
}

// answerDue tells whether err is a first call to the runtime of a Ready and
// Synced RuntimeSecret that the runtime has not answered within its grace:
// it goes on, and its answer tells the next reconcile how the runtime is.
func answerDue(cr *v1alpha1.RuntimeSecret, err error) bool {
	var failed *breaker.Error
	return errors.As(err, &failed) && failed.Pending && !failed.Rejected &&
		resource.IsConditionTrue(cr.GetCondition(xpv2.TypeReady)) && resource.IsConditionTrue(cr.GetCondition(xpv2.TypeSynced))
}

// readError says that reading the Secret on the runtime failed, and, for a
// deletion held up by it, when the deletion completes anyway.
func (e *external) readError(cr *v1alpha1.RuntimeSecret, err error) error {
	ns, name := cr.TargetSecret()
	return withNote(errors.Wrapf(err, errReadOnRuntime, secretName(ns, name), cr.Spec.ForProvider.RuntimeID), e.deletionNote(cr, err))
}

// ours refuses a Secret the provider did not make: it is never written or
// deleted.
func ours(s *corev1.Secret, runtimeID string) error {
	if s.Labels[v1alpha1.LabelManagedBy] != v1alpha1.ManagedBy {
		return errors.Errorf(errNotOurs, secretName(s.Namespace, s.Name), runtimeID)
	}
	return nil
}

// observeMissing is the observation of a Secret that is not on the runtime.
func (e *external) observeMissing(cr *v1alpha1.RuntimeSecret, last string, fromEvent bool) managed.ExternalObservation {
	ns, name := cr.TargetSecret()
	id := cr.Spec.ForProvider.RuntimeID
	cr.Status.AtProvider.DataHash = ""
	switch {
	case last != "":
		// Deleted by someone else after the provider wrote it: put back as an
		// update, not as a creation, which would record the creation of
		// something that existed (two annotation writes, a Creating status).
		e.changedBySomeoneElse(cr, last, nil, fromEvent)
		cr.SetConditions(xpv2.Unavailable().WithMessage(fmt.Sprintf("Secret %s/%s on runtime %s was deleted; restoring it", ns, name, id)))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false, Diff: "deleted"}
	case createdByUpdate(cr):
		// Not made yet: Update makes it. crossplane-runtime's creation would
		// record two annotations and a Creating status and take one more
		// reconcile, for a Secret whose name is fixed and whose creation is safe
		// to repeat (Observe finds it).
		cr.SetConditions(xpv2.Creating().WithMessage(fmt.Sprintf("Creating Secret %s/%s on runtime %s", ns, name, id)))
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false, Diff: "missing"}
	}
	return managed.ExternalObservation{ResourceExists: false}
}

// observeDeletion observes a resource being deleted: the Secret exists for
// crossplane-runtime to delete only while it is on a runtime that answers
// and it is the provider's.
func (e *external) observeDeletion(ctx context.Context, cr *v1alpha1.RuntimeSecret) (managed.ExternalObservation, error) {
	ns, name := cr.TargetSecret()
	id := cr.Spec.ForProvider.RuntimeID
	at := &cr.Status.AtProvider
	if e.deleted.has(cr.GetUID()) {
		// Deleted on the runtime by this process, in the reconcile before.
		at.DataHash = ""
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if e.kubeconfigData == nil && e.runtime == nil {
		e.recorder.Event(cr, event.Normal(eventRuntimeGone, fmt.Sprintf("The kubeconfig Secret %s is gone, so runtime %s is taken to be gone with its Secret %s/%s; deletion completes", e.kubeconfig, id, ns, name)))
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	cur, err := e.target(ctx, cr)
	switch {
	case err != nil && e.giveUp(cr, err):
		return managed.ExternalObservation{ResourceExists: false}, nil
	case err != nil:
		return managed.ExternalObservation{}, e.readError(cr, err)
	case cur == nil:
		at.DataHash = ""
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	if err := ours(cur, id); err != nil {
		e.recorder.Event(cr, event.Normal(eventLeftUnmanaged, err.Error()))
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	e.current = cur
	at.DataHash = v1alpha1.DataHash(cur.Data)
	return managed.ExternalObservation{ResourceExists: true}, nil
}

// createdByUpdate tells whether the management policies let Update make a
// missing Secret: they allow both creating and updating it. Otherwise the
// Secret is reported missing and crossplane-runtime creates it, or not, as
// they say.
func createdByUpdate(cr *v1alpha1.RuntimeSecret) bool {
	p := cr.GetManagementPolicies()
	return len(p) == 0 || slices.Contains(p, xpv2.ManagementActionAll) ||
		(slices.Contains(p, xpv2.ManagementActionCreate) && slices.Contains(p, xpv2.ManagementActionUpdate))
}

// changedBySomeoneElse tells a repair from an update: the runtime held what it
// should when last seen (last), and its Secret (cur; nil: deleted) no longer
// does, though what it should hold did not change. A new client secret, which
// also makes the Secret differ, is not someone else's doing. A fight, a change
// by someone else again and again, is told in a Warning event. The Secret's
// digest is the one Observe just recorded: a poll that finds it unchanged
// hashes nothing more.
func (e *external) changedBySomeoneElse(cr *v1alpha1.RuntimeSecret, last string, cur *corev1.Secret, fromEvent bool) {
	if last == "" || last == cr.Status.AtProvider.DataHash || last != v1alpha1.DataHash(e.want) {
		return
	}
	f := e.watcher.Repairing(client.ObjectKeyFromObject(cr), fromEvent)
	if !f.Started {
		return
	}
	ns, name := cr.TargetSecret()
	who := "someone else"
	if w := lastWriter(cur); w != "" {
		who = fmt.Sprintf("someone else (last written by %q)", w)
	}
	e.recorder.Event(cr, event.Warning(eventSecretFought, fmt.Errorf(
		"Secret %s/%s on runtime %s was changed or deleted by %s %d times, each within %s of the one before: something fights the provider over it. Its repairs now wait %s, doubling with each further change up to %s; other runtimes are not held back. Stop the other writer; the provider keeps this Secret",
		ns, name, cr.Spec.ForProvider.RuntimeID, who, f.Changes, f.Window, f.Wait, f.MaxDelay)))
}

// lastWriter names the field manager of the latest write to s that was not the
// provider's, "" if none is known.
func lastWriter(s *corev1.Secret) string {
	if s == nil {
		return ""
	}
	var who string
	var at time.Time
	for _, f := range s.ManagedFields {
		if f.Manager != fieldManager && f.Time != nil && !f.Time.Time.Before(at) {
			who, at = f.Manager, f.Time.Time
		}
	}
	return who
}

// wait reports a missing prerequisite. The resource counts as up to date so that
// nothing is written and no error is raised; the watches on Secrets and
// IASApplications bring it back as soon as the prerequisite changes.
func (e *external) wait(cr *v1alpha1.RuntimeSecret, what string) (managed.ExternalObservation, error) {
	cr.SetConditions(xpv2.Condition{
		Type:               xpv2.TypeReady,
		Status:             corev1.ConditionFalse,
		Reason:             reasonWaiting,
		Message:            "Waiting for " + what,
		LastTransitionTime: metav1.Now(),
	})
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// desired returns the data the runtime's Secret should hold, or what it still
// waits for.
func (e *external) desired(ctx context.Context, cr *v1alpha1.RuntimeSecret) (map[string][]byte, string, error) {
	p := cr.Spec.ForProvider
	if p.ApplicationRef != nil {
		app := &iasv1alpha1.IASApplication{}
		err := e.kube.Get(ctx, types.NamespacedName{Namespace: cr.GetNamespace(), Name: p.ApplicationRef.Name}, app)
		switch {
		case kerrors.IsNotFound(err):
			return nil, fmt.Sprintf("the IASApplication %s, which does not exist", p.ApplicationRef.Name), nil
		case err != nil:
			return nil, "", errors.Wrapf(err, errReadApplication, p.ApplicationRef.Name)
		case !resource.IsConditionTrue(app.GetCondition(xpv2.TypeReady)):
			return nil, fmt.Sprintf("the IASApplication %s to become Ready", p.ApplicationRef.Name), nil
		}
	}
	if p.CredentialsSecretRef == nil {
		return nil, "", errors.New(errNoCredentials)
	}
	s := &corev1.Secret{}
	ref := cr.GetNamespace() + "/" + p.CredentialsSecretRef.Name
	err := e.kube.Get(ctx, types.NamespacedName{Namespace: cr.GetNamespace(), Name: p.CredentialsSecretRef.Name}, s)
	switch {
	case kerrors.IsNotFound(err):
		return nil, fmt.Sprintf("the credentials Secret %s", ref), nil
	case err != nil:
		return nil, "", errors.Wrapf(err, errReadCredentials, ref)
	}
	want := make(map[string][]byte, len(iasv1alpha1.ConnectionKeys))
	var missing []string
	for _, k := range iasv1alpha1.ConnectionKeys {
		if len(s.Data[k]) == 0 {
			missing = append(missing, k)
		}
		want[k] = s.Data[k]
	}
	if len(missing) > 0 {
		return nil, fmt.Sprintf("the credentials Secret %s to hold the keys %s", ref, strings.Join(missing, ", ")), nil
	}
	return want, "", nil
}

func (e *external) Create(ctx context.Context, cr *v1alpha1.RuntimeSecret) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, e.create(ctx, cr)
}

func (e *external) create(ctx context.Context, cr *v1alpha1.RuntimeSecret) error {
	ns, name := cr.TargetSecret()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: v1alpha1.SecretLabels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       e.want,
	}
	written := e.watcher.OwnWrite(client.ObjectKeyFromObject(cr))
	_, err := e.runtime.Secrets(ns).Create(ctx, s, metav1.CreateOptions{FieldManager: fieldManager})
	written(err == nil)
	if kerrors.IsNotFound(err) {
		return errors.Errorf(errNoNamespace, ns, cr.Spec.ForProvider.RuntimeID)
	}
	if err != nil {
		return errors.Wrapf(err, errCreateOnRuntime, secretName(ns, name), cr.Spec.ForProvider.RuntimeID)
	}
	return nil
}

func (e *external) Update(ctx context.Context, cr *v1alpha1.RuntimeSecret) (managed.ExternalUpdate, error) {
	ns, name := cr.TargetSecret()
	id := cr.Spec.ForProvider.RuntimeID
	if e.current == nil {
		// Not made yet, or deleted by someone else: made (again).
		if err := e.create(ctx, cr); err != nil {
			return managed.ExternalUpdate{}, err
		}
		e.restored(cr)
		return managed.ExternalUpdate{}, nil
	}
	if e.current.Type != corev1.SecretTypeOpaque {
		// A Secret's type cannot change: replace it.
		if err := e.delete(ctx, cr); err != nil {
			return managed.ExternalUpdate{}, err
		}
		if err := e.create(ctx, cr); err != nil {
			return managed.ExternalUpdate{}, err
		}
		e.recorder.Event(cr, event.Normal(eventReplacedWrongType, fmt.Sprintf("Replaced Secret %s/%s on runtime %s, which had type %q instead of Opaque", ns, name, id, e.current.Type)))
		return managed.ExternalUpdate{}, nil
	}
	s := e.current.DeepCopy()
	s.Data, s.StringData = e.want, nil
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	maps.Copy(s.Labels, v1alpha1.SecretLabels())
	written := e.watcher.OwnWrite(client.ObjectKeyFromObject(cr))
	_, err := e.runtime.Secrets(ns).Update(ctx, s, metav1.UpdateOptions{FieldManager: fieldManager})
	written(err == nil)
	if err != nil {
		return managed.ExternalUpdate{}, errors.Wrapf(err, errUpdateOnRuntime, secretName(ns, name), id)
	}
	e.restored(cr)
	return managed.ExternalUpdate{}, nil
}

// restored reports the runtime's Secret as it now is: what it should hold.
func (e *external) restored(cr *v1alpha1.RuntimeSecret) {
	// Reported at once: the IASApplication retires its older secret only once
	// every runtime carries the new one.
	cr.Status.AtProvider.DataHash = v1alpha1.DataHash(e.want)
	available := xpv2.Available()
	if w := e.wasReady; w.Status == available.Status && w.Reason == available.Reason && w.Message == available.Message {
		available = w
	}
	cr.SetConditions(available)
}

func (e *external) Delete(ctx context.Context, cr *v1alpha1.RuntimeSecret) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, e.delete(ctx, cr)
}

// delete removes the Secret Observe found, and only that one: the UID
// precondition keeps a Secret created meanwhile by someone else safe.
func (e *external) delete(ctx context.Context, cr *v1alpha1.RuntimeSecret) error {
	ns, name := cr.TargetSecret()
	written := e.watcher.OwnWrite(client.ObjectKeyFromObject(cr))
	err := e.runtime.Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &e.current.UID}})
	written(err == nil)
	switch {
	case err == nil, kerrors.IsNotFound(err):
		if meta.WasDeleted(cr) {
			e.deleted.add(cr.GetUID())
		}
		return nil
	case meta.WasDeleted(cr) && e.giveUp(cr, err):
		return nil
	}
	return withNote(errors.Wrapf(err, errDeleteOnRuntime, secretName(ns, name), cr.Spec.ForProvider.RuntimeID), e.deletionNote(cr, err))
}

// giveUp tells whether a deletion stops waiting for a runtime that does not
// answer, and says so in a Warning event naming the Secret that may be left.
func (e *external) giveUp(cr *v1alpha1.RuntimeSecret, err error) bool {
	if !breaker.IsTargetFailure(err) || e.now().Before(cr.GetDeletionTimestamp().Add(e.unreachableDeletion)) {
		return false
	}
	ns, name := cr.TargetSecret()
	e.recorder.Event(cr, event.Warning(eventGaveUpOnRuntime, fmt.Errorf(
		"runtime %s has not answered for %s since the deletion began, so the deletion completes without it: Secret %s/%s may be left on that runtime; delete it there if the runtime comes back (%w)",
		cr.Spec.ForProvider.RuntimeID, e.unreachableDeletion, ns, name, err)))
	return true
}

// deletionNote tells, on a deletion held up by a runtime that does not
// answer, when it completes anyway.
func (e *external) deletionNote(cr *v1alpha1.RuntimeSecret, err error) string {
	if !meta.WasDeleted(cr) || !breaker.IsTargetFailure(err) {
		return ""
	}
	return fmt.Sprintf(noteDeletion,
		cr.GetDeletionTimestamp().Add(e.unreachableDeletion).UTC().Format(time.RFC3339))
}

func (e *external) Disconnect(context.Context) error { return nil }

// differences names what differs between the runtime's Secret and the desired
// data, by key only.
func differences(cur *corev1.Secret, want map[string][]byte) []string {
	var d []string
	if cur.Type != corev1.SecretTypeOpaque {
		d = append(d, fmt.Sprintf("type %q", cur.Type))
	}
	for _, k := range slices.Sorted(maps.Keys(v1alpha1.SecretLabels())) {
		if cur.Labels[k] != v1alpha1.SecretLabels()[k] {
			d = append(d, "label "+k)
		}
	}
	var keys []string
	for k, v := range want {
		if got, ok := cur.Data[k]; !ok || !bytes.Equal(got, v) {
			keys = append(keys, k)
		}
	}
	for k := range cur.Data {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		d = append(d, "data "+strings.Join(keys, ", "))
	}
	return d
}
