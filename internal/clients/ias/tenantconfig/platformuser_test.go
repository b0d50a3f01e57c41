package tenantconfig

import (
	"context"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

func TestNotPlatformUser(t *testing.T) {
	platformSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "platform-creds", Namespace: DefaultKymaNamespace},
		Data: map[string][]byte{KeyURL: []byte("https://t1.accounts.ondemand.com"), KeyUsername: []byte("platform-admin"), KeyPassword: []byte("right")}}
	platform := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "platform"},
		Spec: v1alpha1.ClusterProviderConfigSpec{Credentials: v1alpha1.ClusterCredentials{Source: xpv2.CredentialsSourceSecret,
			SecretRef: xpv2.SecretReference{Namespace: DefaultKymaNamespace, Name: "platform-creds"}}}}
	const secret = "credentials Secret tenant-b/creds of ProviderConfig tenant-b/ias"
	cases := map[string]struct {
		reason   string
		url      string
		username string
		kind     string
		want     error
	}{
		"platform user": {reason: "a namespace may not log on as the platform's user",
			url: "https://t1.accounts.ondemand.com", username: "platform-admin", want: errors.Errorf(ErrPlatformUser, secret)},
		"other host name": {reason: "nor under the tenant's other host name",
			url: "https://t1.accounts.cloud.sap", username: "platform-admin", want: errors.Errorf(ErrPlatformUser, secret)},
		"port spelling": {reason: "nor with the port spelt out",
			url: "https://T1.accounts.ondemand.com:0443/", username: "platform-admin", want: errors.Errorf(ErrPlatformUser, secret)},
		"username case": {reason: "nor with the username in other case",
			url: "https://t1.accounts.ondemand.com", username: "Platform-Admin", want: errors.Errorf(ErrPlatformUser, secret)},
		"own user": {reason: "a user of its own at the same tenant is the namespace's",
			url: "https://t1.accounts.ondemand.com", username: "team-b-admin"},
		"other tenant": {reason: "the same name at another tenant is another user",
			url: "https://t2.accounts.ondemand.com", username: "platform-admin"},
		"the platform itself": {reason: "the ClusterProviderConfig itself logs on as its user",
			url: "https://t1.accounts.ondemand.com", username: "platform-admin", kind: v1alpha1.ClusterProviderConfigKind},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns, pcSecret := "tenant-b", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "tenant-b"},
				Data: map[string][]byte{KeyURL: []byte(tc.url), KeyUsername: []byte(tc.username), KeyPassword: []byte("guess")}}
			objs := []client.Object{platformSecret, platform, pcSecret,
				&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "ias", Namespace: "tenant-b"},
					Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret,
						SecretRef: xpv2.LocalSecretReference{Name: "creds"}}}}}
			ref := &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: "ias"}
			if tc.kind == v1alpha1.ClusterProviderConfigKind {
				ns, ref = DefaultKymaNamespace, &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: "platform"}
			}
			kube := fake.NewClientBuilder().WithScheme(fakes.Scheme()).WithObjects(objs...).Build()
			mg := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}}
			mg.SetProviderConfigReference(ref)
			_, err := Resolver{}.Resolve(context.Background(), kube, mg)
			if diff := cmp.Diff(tc.want, err, test.EquateErrors()); diff != "" {
				t.Errorf("%s\nResolve(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
