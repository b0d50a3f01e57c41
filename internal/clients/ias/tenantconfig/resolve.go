// Package tenantconfig resolves the ProviderConfig or ClusterProviderConfig a
// managed resource references, with its credentials and CA bundle Secrets,
// into the IAS tenant the ias client calls, in Connect, as
// crossplane/provider-template resolves its ProviderConfig. Package
// controller/providerconfig counts the configs' users.
package tenantconfig

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	kclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// Keys of the credentials Secret: url, and either username and password or a
// client certificate (tls.crt and tls.key, or pkcs12 and pkcs12Password).
const (
	KeyUsername       = "username"
	KeyPassword       = "password"
	KeyURL            = "url"
	KeyTLSCert        = "tls.crt"
	KeyTLSKey         = "tls.key"
	KeyPKCS12         = "pkcs12"
	KeyPKCS12Password = "pkcs12Password"
)

// Defaults of the ProviderConfig's rateLimit.
const (
	DefaultQPS   = 40
	DefaultBurst = 10
)

// Resolved is what a ProviderConfig or ClusterProviderConfig resolves to.
type Resolved struct {
	Tenant        ias.Tenant
	GlobalAccount string
	// GlobalAccountFromKymaLabel: the Kyma CR's label, where there is one,
	// is the globalAccount of the apps made from it.
	GlobalAccountFromKymaLabel bool
	// SecretRotation applies to the resources that set no secret validity of
	// their own; nil: none.
	SecretRotation *v1alpha1.SecretRotation
	// ProviderConfig is the object it came from, for events.
	ProviderConfig kclient.Object
}

// Resolver resolves ProviderConfigs; its certificates parsed once each.
type Resolver struct {
	Certs *ias.ClientCerts
	// KymaNamespace is the namespace a ClusterProviderConfig admits when it
	// names none; empty: DefaultKymaNamespace.
	KymaNamespace string
	// PlainHTTPLoopback takes http tenant URLs to loopback hosts: for tests only.
	PlainHTTPLoopback bool
}

// Resolve resolves the (Cluster)ProviderConfig a managed resource references,
// read with kube, into a validated tenant; a ClusterProviderConfig only for
// the namespaces it admits. Its errors name the object and key
// at fault and never carry a credential.
func (r Resolver) Resolve(ctx context.Context, kube kclient.Reader, mg resource.ModernManaged) (Resolved, error) {
	ref := mg.GetProviderConfigReference()
	if ref == nil || ref.Name == "" {
		return Resolved{}, errors.New(errNoRef)
	}
	var (
		secret   types.NamespacedName
		ca       *types.NamespacedName
		caKey    string
		settings v1alpha1.TenantSettings
		what     string
		from     kclient.Object
		// namespace of a ProviderConfig; empty for the platform's configs.
		namespace string
	)
	switch ref.Kind {
	case v1alpha1.ProviderConfigKind:
		pc := &v1alpha1.ProviderConfig{}
		what = fmt.Sprintf("ProviderConfig %s/%s", mg.GetNamespace(), ref.Name)
		if err := kube.Get(ctx, types.NamespacedName{Namespace: mg.GetNamespace(), Name: ref.Name}, pc); err != nil {
			return Resolved{}, getError(what, err)
		}
		secret = types.NamespacedName{Namespace: pc.Namespace, Name: pc.Spec.Credentials.SecretRef.Name}
		if r := pc.Spec.CABundleSecretRef; r != nil {
			ca, caKey = &types.NamespacedName{Namespace: pc.Namespace, Name: r.Name}, r.Key
		}
		settings, from, namespace = pc.Spec.TenantSettings, pc, pc.Namespace
	case v1alpha1.ClusterProviderConfigKind, "":
		pc := &v1alpha1.ClusterProviderConfig{}
		what = "ClusterProviderConfig " + ref.Name
		if err := kube.Get(ctx, types.NamespacedName{Name: ref.Name}, pc); err != nil {
			return Resolved{}, getError(what, err)
		}
		if err := r.admits(ctx, kube, ref.Name, pc.Spec, mg.GetNamespace()); err != nil {
			return Resolved{}, err
		}
		secret = types.NamespacedName{Namespace: pc.Spec.Credentials.SecretRef.Namespace, Name: pc.Spec.Credentials.SecretRef.Name}
		if r := pc.Spec.CABundleSecretRef; r != nil {
			ca, caKey = &types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, r.Key
		}
		settings, from = pc.Spec.TenantSettings, pc
	default:
		return Resolved{}, errors.Errorf(errKind, ref.Kind)
	}

	data, err := secretData(ctx, kube, what, "credentials", secret)
	if err != nil {
		return Resolved{}, err
	}
	t := ias.Tenant{QPS: DefaultQPS, Burst: DefaultBurst, URL: strings.TrimSpace(string(data[KeyURL])), Namespace: namespace}
	if t.URL == "" {
		return Resolved{}, errors.Errorf(errNoKey, secretOf("credentials", secret, what), KeyURL)
	}
	if err := r.logon(&t, data, secretOf("credentials", secret, what), time.Now()); err != nil {
		return Resolved{}, err
	}
	if t.URL, err = ias.ValidateURL(t.URL, r.PlainHTTPLoopback); err != nil {
		return Resolved{}, errors.Wrapf(err, errURL, secretOf("credentials", secret, what))
	}
	if namespace != "" && t.Username != "" {
		if err := r.notPlatformUser(ctx, kube, t, secretOf("credentials", secret, what)); err != nil {
			return Resolved{}, err
		}
	}
	if ca != nil {
		cd, err := secretData(ctx, kube, what, "CA bundle", *ca)
		if err != nil {
			return Resolved{}, err
		}
		if len(cd[caKey]) == 0 {
			return Resolved{}, errors.Errorf(errNoKey, secretOf("CA bundle", *ca, what), caKey)
		}
		t.CABundle = cd[caKey]
	}
	if rl := settings.RateLimit; rl != nil {
		if rl.QPS > 0 {
			t.QPS = int(rl.QPS)
		}
		if rl.Burst > 0 {
			t.Burst = int(rl.Burst)
		}
	}
	return Resolved{Tenant: t, GlobalAccount: settings.GlobalAccount, GlobalAccountFromKymaLabel: settings.GlobalAccountFromKymaLabel,
		SecretRotation: settings.SecretRotation, ProviderConfig: from}, nil
}

// logon reads how to log on to IAS from the credentials Secret's data: a
// technical user's username and password, or a client certificate. Errors name
// the Secret and its keys, never a value.
func (r Resolver) logon(t *ias.Tenant, data map[string][]byte, secret string, now time.Time) error {
	has := func(k string) bool { return len(bytes.TrimSpace(data[k])) > 0 }
	password := has(KeyUsername) || has(KeyPassword)
	pem, p12 := has(KeyTLSCert) || has(KeyTLSKey), has(KeyPKCS12)
	switch {
	case password && (pem || p12):
		return errors.Errorf(errBothLogons, secret, certKeys(pem, p12))
	case pem && p12:
		return errors.Errorf(errTwoCertificates, secret)
	case password:
		for key, dst := range map[string]*string{KeyUsername: &t.Username, KeyPassword: &t.Password} {
			if !has(key) {
				return errors.Errorf(errNoPasswordKey, secret, key)
			}
			*dst = strings.TrimSpace(string(data[key]))
		}
		return nil
	case pem:
		for _, key := range []string{KeyTLSCert, KeyTLSKey} {
			if !has(key) {
				return errors.Errorf(errNoPEMKey, secret, key)
			}
		}
		c, err := r.Certs.PEM(data[KeyTLSCert], data[KeyTLSKey])
		if err != nil {
			return errors.Wrapf(err, errPEM, secret)
		}
		t.ClientCert = c
	case p12:
		c, err := r.Certs.PKCS12(data[KeyPKCS12], string(data[KeyPKCS12Password]))
		if err != nil {
			return errors.Wrapf(err, errPKCS12, secret)
		}
		t.ClientCert = c
	default:
		return errors.Errorf(errNoLogon, secret)
	}
	if err := t.ClientCert.CheckValidity(now); err != nil {
		return errors.Errorf(errCertificateInvalid, secret, err.Error())
	}
	return nil
}

func certKeys(pem, p12 bool) string {
	if pem && !p12 {
		return "tls.crt, tls.key"
	}
	if p12 && !pem {
		return "pkcs12"
	}
	return "tls.crt, tls.key, pkcs12"
}

func getError(what string, err error) error {
	if kerrors.IsNotFound(err) {
		return errors.Errorf(errNotExist, what)
	}
	return errors.Wrapf(err, ErrGet, what)
}

func secretData(ctx context.Context, kube kclient.Reader, what, role string, nn types.NamespacedName) (map[string][]byte, error) {
	s := &corev1.Secret{}
	if err := kube.Get(ctx, nn, s); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, errors.Errorf(errNotExist, secretOf(role, nn, what))
		}
		return nil, errors.Wrapf(err, ErrGet, secretOf(role, nn, what))
	}
	return s.Data, nil
}
