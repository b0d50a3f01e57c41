package runtimesecret

import (
	"context"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestReaders: a Secret wakes the RuntimeSecrets that read it, except those
// that read it as the connection Secret of an application not Ready yet.
func TestReaders(t *testing.T) {
	scheme := fakes.Scheme()
	rs := func(name, app string) *v1alpha1.RuntimeSecret {
		p := v1alpha1.RuntimeSecretParameters{RuntimeID: name, CredentialsSecretRef: &xpv2.LocalSecretReference{Name: "creds"}}
		if app != "" {
			p.ApplicationRef = &xpv2.NamespacedReference{Name: app}
		}
		return &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kcp"}, Spec: v1alpha1.RuntimeSecretSpec{ForProvider: p}}
	}
	app := func(name string, c xpv2.Condition) *iasv1alpha1.IASApplication {
		a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kcp"}}
		a.SetConditions(c)
		return a
	}
	objects := []runtime.Object{
		rs("direct", ""),               // credentials named directly
		rs("ready", "app-ready"),       // its application is Ready
		rs("creating", "app-creating"), // its application is not Ready yet
		rs("absent", "app-absent"),     // its application does not exist
		app("app-ready", xpv2.Available()), app("app-creating", xpv2.Creating()),
	}
	kube := crfake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(objects...).
		WithIndex(&v1alpha1.RuntimeSecret{}, indexSecrets, v1alpha1.SecretsRead).Build()

	cases := map[string]struct {
		reason string
		secret string
		want   []string
	}{
		"CredentialsSecret": {
			reason: "the credentials Secret wakes those whose application is Ready, or that have none: the others are woken by their application's readiness",
			secret: "creds", want: []string{"direct", "ready"},
		},
		"KubeconfigSecret": {
			reason: "a kubeconfig Secret wakes its RuntimeSecret, whatever its application",
			secret: "kubeconfig-creating", want: []string{"creating"},
		},
		"OtherSecret": {
			reason: "a Secret no RuntimeSecret reads wakes none",
			secret: "other",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: tc.secret, Namespace: "kcp"}}
			var got []string
			for _, r := range readers(kube)(context.Background(), s) {
				got = append(got, r.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nwoken: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestReferenceResolved: the write of a resolved applicationRef is told apart
// from every other change of the spec.
func TestReferenceResolved(t *testing.T) {
	base := func() *v1alpha1.RuntimeSecret {
		return &v1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "kcp"},
			Spec: v1alpha1.RuntimeSecretSpec{ForProvider: v1alpha1.RuntimeSecretParameters{RuntimeID: "rt-1",
				ApplicationRef: &xpv2.NamespacedReference{Name: "app"}}}}
	}
	resolved := func(rs *v1alpha1.RuntimeSecret) *v1alpha1.RuntimeSecret {
		rs.Spec.ForProvider.CredentialsSecretRef = &xpv2.LocalSecretReference{Name: "app-ias"}
		return rs
	}
	cases := map[string]struct {
		reason  string
		was, is *v1alpha1.RuntimeSecret
		want    bool
	}{
		"Resolved": {reason: "the provider's own write of the resolved reference", was: base(), is: resolved(base()), want: true},
		"ResolvedAndAnotherFieldChanged": {reason: "a write that changes more than the reference is someone else's", was: base(), is: func() *v1alpha1.RuntimeSecret {
			rs := resolved(base())
			rs.Spec.ForProvider.RuntimeID = "rt-2"
			return rs
		}(), want: false},
		"ResolvedAndLabelled": {reason: "the same for a label", was: base(), is: func() *v1alpha1.RuntimeSecret {
			rs := resolved(base())
			rs.SetLabels(map[string]string{"a": "b"})
			return rs
		}(), want: false},
		"CredentialsChanged": {reason: "a reference that changes from one Secret to another was not resolved just now", was: resolved(base()), is: func() *v1alpha1.RuntimeSecret {
			rs := base()
			rs.Spec.ForProvider.CredentialsSecretRef = &xpv2.LocalSecretReference{Name: "other"}
			return rs
		}(), want: false},
		"CredentialsNamedDirectly": {reason: "without an applicationRef there is nothing to resolve", was: func() *v1alpha1.RuntimeSecret {
			rs := base()
			rs.Spec.ForProvider.ApplicationRef = nil
			return rs
		}(), is: func() *v1alpha1.RuntimeSecret {
			rs := resolved(base())
			rs.Spec.ForProvider.ApplicationRef = nil
			return rs
		}(), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := referenceResolved().Update(event.UpdateEvent{ObjectOld: tc.was, ObjectNew: tc.is}); got != tc.want {
				t.Errorf("%s\nreferenceResolved = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

// TestReadinessChanged: an IASApplication wakes its RuntimeSecrets when it
// becomes Ready or stops being Ready, its connection Secret moves, or its
// deletion begins; not for the status writes in between.
func TestReadinessChanged(t *testing.T) {
	app := func(ready *xpv2.Condition, change ...func(*iasv1alpha1.IASApplication)) *iasv1alpha1.IASApplication {
		a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "kcp"}}
		a.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "app-ias"})
		if ready != nil {
			a.SetConditions(*ready)
		}
		for _, f := range change {
			f(a)
		}
		return a
	}
	creating, available, unavailable := xpv2.Creating(), xpv2.Available(), xpv2.Unavailable()
	cases := map[string]struct {
		reason  string
		was, is *iasv1alpha1.IASApplication
		want    bool
	}{
		"NewToCreating":          {reason: "an application on its way has no credentials to read yet", was: app(nil), is: app(&creating), want: false},
		"CreatingToAvailable":    {reason: "a Ready application has credentials to write", was: app(&creating), is: app(&available), want: true},
		"AvailableToUnavailable": {reason: "an application no longer Ready is told to its RuntimeSecrets", was: app(&available), is: app(&unavailable), want: true},
		"AnotherStatusField":     {reason: "the status writes in between change nothing a RuntimeSecret reads", was: app(&available), is: app(&available, func(a *iasv1alpha1.IASApplication) { a.Status.AtProvider.SecretHint = "abcd" }), want: false},
		"ConnectionSecretMoved": {reason: "a connection Secret that moves is read anew", was: app(&available), is: app(&available, func(a *iasv1alpha1.IASApplication) {
			a.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "other"})
		}), want: true},
		"DeletionBegins": {reason: "the RuntimeSecrets remove their Secrets before the application goes", was: app(&available), is: app(&available, func(a *iasv1alpha1.IASApplication) {
			now := metav1.Now()
			a.SetDeletionTimestamp(&now)
		}), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := readinessChanged().Update(event.UpdateEvent{ObjectOld: tc.was, ObjectNew: tc.is}); got != tc.want {
				t.Errorf("%s\nreadinessChanged = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
