package eventingauth

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kyma-project/provider-eventing-auth/apis"
)

func TestDesired(t *testing.T) {
	// The label travels as an annotation, never as spec.globalAccount: the
	// app's globalAccount is the ProviderConfig's unless it asks for the label.
	cases := map[string]struct {
		reason  string
		labels  map[string]string
		spec    map[string]any
		account string
	}{
		"WithGlobalAccount": {
			reason: "the Kyma CR's global account label goes on to the EventingAuth",
			labels: map[string]string{LabelGlobalAccount: "ga-1"}, spec: map[string]any{"runtimeId": "rt-1"}, account: "ga-1",
		},
		"NoLabel": {
			reason: "without the label there is no account to carry",
			spec:   map[string]any{"runtimeId": "rt-1"},
		},
		"EmptyLabel": {
			reason: "an empty label is no account either",
			labels: map[string]string{LabelGlobalAccount: ""}, spec: map[string]any{"runtimeId": "rt-1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kyma := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "rt-1", Namespace: "kcp-system", UID: types.UID("u-1"), Labels: tc.labels}}
			xr := Desired(kyma, 0)
			if xr.GroupVersionKind() != Kind || xr.GetName() != "rt-1" || xr.GetNamespace() != "kcp-system" {
				t.Errorf("%s\nwrong identity: %s %s/%s", tc.reason, xr.GroupVersionKind(), xr.GetNamespace(), xr.GetName())
			}
			if diff := cmp.Diff(tc.spec, xr.Object["spec"]); diff != "" {
				t.Errorf("%s\nspec: -want +got:\n%s", tc.reason, diff)
			}
			if got := xr.GetAnnotations()[apis.AnnotationKymaGlobalAccount]; got != tc.account {
				t.Errorf("%s\n%s = %q, want %q", tc.reason, apis.AnnotationKymaGlobalAccount, got, tc.account)
			}
			// Core polls it rarely: its watches on the composed resources do the rest.
			if got := xr.GetAnnotations()["crossplane.io/poll-interval"]; got != "10h0m0s" {
				t.Errorf("%s\ncrossplane.io/poll-interval = %q, want 10h0m0s", tc.reason, got)
			}
			owner := metav1.GetControllerOf(xr)
			if owner == nil || owner.UID != "u-1" || owner.Kind != "Kyma" || owner.APIVersion != "operator.kyma-project.io/v1beta2" {
				t.Errorf("%s\ncontroller reference %+v", tc.reason, owner)
			}
		})
	}
}

func TestDesiredDigest(t *testing.T) {
	kyma := func(uid, ga string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "rt-1", Namespace: "kcp-system", UID: types.UID(uid),
			Labels: map[string]string{LabelGlobalAccount: ga}}}
	}
	digest := func(k *metav1.PartialObjectMetadata) string {
		return Desired(k, 0).GetAnnotations()[apis.AnnotationBridgeApplied]
	}
	if a, b := digest(kyma("u-1", "ga-1")), digest(kyma("u-1", "ga-1")); a == "" || a != b {
		t.Errorf("the same Kyma CR gives digests %q and %q, want one, not empty", a, b)
	}
	// What the bridge writes changes with the Kyma CR: it must apply again.
	for name, k := range map[string]*metav1.PartialObjectMetadata{"OtherAccount": kyma("u-1", "ga-2"), "KymaRecreated": kyma("u-2", "ga-1")} {
		if digest(k) == digest(kyma("u-1", "ga-1")) {
			t.Errorf("%s: the digest did not change", name)
		}
	}
	// A new --composite-poll-interval is applied too.
	k := kyma("u-1", "ga-1")
	other := Desired(k, 10*time.Minute)
	if got := other.GetAnnotations()["crossplane.io/poll-interval"]; got != "10m0s" {
		t.Errorf("crossplane.io/poll-interval = %q, want 10m0s", got)
	}
	if other.GetAnnotations()[apis.AnnotationBridgeApplied] == digest(k) {
		t.Error("OtherPollInterval: the digest did not change")
	}
}
