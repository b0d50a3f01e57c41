package kube

import (
	"context"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

func TestSkipUnchangedStatus(t *testing.T) {
	stored := func() *iasv1alpha1.IASApplication {
		a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}}
		a.Status.AtProvider.ID = "uuid"
		a.Status.AtProvider.SecretsCheckedAt = &metav1.Time{Time: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
		a.SetConditions(xpv2.Available())
		return a
	}
	cases := map[string]struct {
		reason    string
		change    func(a *iasv1alpha1.IASApplication)
		other     client.Object
		wantWrite bool
	}{
		"UnchangedIsNotSent": {
			reason: "a status as stored costs no write",
			change: func(*iasv1alpha1.IASApplication) {},
		},
		"SubSecondTimeIsUnchanged": {
			reason: "the API server keeps seconds: a time that differs below them stores the same",
			change: func(a *iasv1alpha1.IASApplication) {
				a.Status.AtProvider.SecretsCheckedAt = &metav1.Time{Time: a.Status.AtProvider.SecretsCheckedAt.Add(300 * time.Millisecond)}
			},
		},
		"ChangedFieldIsSent": {
			reason:    "a changed field is written",
			change:    func(a *iasv1alpha1.IASApplication) { a.Status.AtProvider.SecretHint = "abcd" },
			wantWrite: true,
		},
		"ChangedConditionIsSent": {
			reason:    "so is a changed condition",
			change:    func(a *iasv1alpha1.IASApplication) { a.SetConditions(xpv2.Unavailable()) },
			wantWrite: true,
		},
		"StaleResourceVersionIsSent": {
			reason:    "the cache may lag the API server: only the server can tell then",
			change:    func(a *iasv1alpha1.IASApplication) { a.ResourceVersion = "1" },
			wantWrite: true,
		},
		"NotAManagedResourceIsSent": {
			reason:    "other objects pass unchanged",
			other:     &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}},
			wantWrite: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := fakes.Scheme()
			writes := 0
			c := fake.NewClientBuilder().WithScheme(scheme).
				WithObjects(stored(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}}).
				WithStatusSubresource(&iasv1alpha1.IASApplication{}, &corev1.ConfigMap{}).
				WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					writes++
					return c.SubResource(sub).Update(ctx, obj, opts...)
				}}).Build()
			skipping := SkipUnchangedStatus(c, c)
			ctx := context.Background()
			obj := tc.other
			if obj == nil {
				a := &iasv1alpha1.IASApplication{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "app"}, a); err != nil {
					t.Fatalf("%s\n%v", tc.reason, err)
				}
				tc.change(a)
				obj = a
			} else if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			err := skipping.Status().Update(ctx, obj)
			if tc.wantWrite && writes == 0 {
				t.Errorf("%s\nstatus update was not sent", tc.reason)
			}
			if !tc.wantWrite && (writes != 0 || err != nil) {
				t.Errorf("%s\nunchanged status: writes %d, err %v; want none", tc.reason, writes, err)
			}
		})
	}
}
