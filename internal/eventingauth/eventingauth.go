// Package eventingauth is the EventingAuth composite resource as the kyma
// bridge, the migration from eventing-auth-manager and the local stack share
// it: its kind, the Kyma CR's it is made from, and the EventingAuth a Kyma CR
// should have (Desired).
package eventingauth

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	xpmeta "github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
)

// The kinds the kyma bridge connects.
var (
	KymaKind = schema.GroupVersionKind{Group: "operator.kyma-project.io", Version: "v1beta2", Kind: "Kyma"}
	Kind     = schema.GroupVersionKind{Group: "composite.eventingauth.kyma-project.io", Version: "v1alpha1", Kind: "EventingAuth"}
)

// LabelGlobalAccount on a Kyma CR names its global account.
const LabelGlobalAccount = "kyma-project.io/global-account-id"

// XRPollInterval is how often, by default, Crossplane core re-runs each
// EventingAuth's composition when nothing changed (annotation
// crossplane.io/poll-interval; the provider's --composite-poll-interval).
// Core watches the composed resources (realtime compositions), so its poll is
// only a safety net; at core's default of a minute, polls of many EventingAuths
// kept its workers from new ones, and at an hour each Ready EventingAuth still
// cost four applies an hour that change nothing. It is as long as the
// function's answers are kept (its TTL) and as core's resync a landscape sets
// (--sync-interval=10h). The provider polls the managed resources themselves.
const XRPollInterval = 10 * time.Hour

// Desired is the EventingAuth for a Kyma CR, as the bridge applies
// it, with the digest of its content in apis.AnnotationBridgeApplied; core polls it every
// poll (XRPollInterval if zero).
func Desired(kyma client.Object, poll time.Duration) *unstructured.Unstructured {
	poll = cmp.Or(poll, XRPollInterval)
	xr := &unstructured.Unstructured{}
	xr.SetGroupVersionKind(Kind)
	xr.SetName(kyma.GetName())
	xr.SetNamespace(kyma.GetNamespace())
	xr.SetAnnotations(map[string]string{xpmeta.AnnotationKeyPollInterval: poll.String()})
	ref := metav1.NewControllerRef(kyma, KymaKind)
	// Not blocking the Kyma's deletion: that would need update on kymas/finalizers
	// where OwnerReferencesPermissionEnforcement is on, and the garbage collector
	// deletes the EventingAuth after its Kyma either way.
	ref.BlockOwnerDeletion = nil
	xr.SetOwnerReferences([]metav1.OwnerReference{*ref})
	xr.Object["spec"] = map[string]any{"runtimeId": kyma.GetName()}
	ann := map[string]string{xpmeta.AnnotationKeyPollInterval: poll.String()}
	if ga := kyma.GetLabels()[LabelGlobalAccount]; ga != "" {
		ann[apis.AnnotationKymaGlobalAccount] = ga
	}
	xr.SetAnnotations(ann)
	b, _ := json.Marshal(xr.Object) // Maps of strings: never fails.
	sum := sha256.Sum256(b)
	ann[apis.AnnotationBridgeApplied] = hex.EncodeToString(sum[:8])
	xr.SetAnnotations(ann)
	return xr
}
