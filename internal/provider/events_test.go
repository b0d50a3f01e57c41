package provider

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestSpamKey: events of one object share an allowance only when their type
// and reason are the same.
func TestSpamKey(t *testing.T) {
	event := func(object, typ, reason string) *corev1.Event {
		return &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "RuntimeSecret", Namespace: "kcp", Name: object, UID: types.UID("uid-" + object)},
			Type: typ, Reason: reason, Message: "any " + reason}
	}
	refused := event("rt-1", corev1.EventTypeWarning, "CannotObserveExternalResource")
	cases := map[string]struct {
		other *corev1.Event
		same  bool
	}{
		"the same complaint again, other words": {other: &corev1.Event{InvolvedObject: refused.InvolvedObject, Type: refused.Type, Reason: refused.Reason, Message: "other words"}, same: true},
		"another reason":                        {other: event("rt-1", corev1.EventTypeWarning, "CannotUpdateExternalResource")},
		"a Normal event":                        {other: event("rt-1", corev1.EventTypeNormal, "CreatedExternalResource")},
		"another object":                        {other: event("rt-2", corev1.EventTypeWarning, "CannotObserveExternalResource")},
	}
	for name, tc := range cases {
		if got := spamKey(refused) == spamKey(tc.other); got != tc.same {
			t.Errorf("%s: same key %v, want %v", name, got, tc.same)
		}
	}
}
