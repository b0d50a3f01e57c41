package tenantconfig

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Errors of resolving a ProviderConfig, used with crossplane-runtime's
// errors.Wrapf and Errorf, at most two arguments each: tests build the errors
// they expect from the same constants. They name the object and key at fault,
// never a value. What they call "the Secret" is how secretOf names it.
const (
	errNoRef = "no providerConfigRef is set"
	// ErrNotAdmitted: the config, the resource's namespace, what it admits.
	ErrNotAdmitted = "ClusterProviderConfig %s does not admit managed resources of namespace %s: it admits %s; nothing is sent to IAS"
	// ErrPlatformUser: the Secret.
	ErrPlatformUser = "%s names a technical user that a ClusterProviderConfig logs on as at the same IAS tenant: a namespace's ProviderConfig may not log on as a platform user, since IAS counts every failed logon toward locking that user; nothing is sent to IAS"
	// errListPlatform: reading the ClusterProviderConfigs failed.
	errListPlatform = "cannot read the ClusterProviderConfigs to check that this ProviderConfig does not log on as a platform user"
	// errSelector: the config.
	errSelector = "spec.namespaceSelector of ClusterProviderConfig %s"
	// errKind: the reference's kind.
	errKind = "providerConfigRef kind %q is not ProviderConfig or ClusterProviderConfig"
	// ErrGet: the object (its kind and name). Exported for the tests of the
	// controllers that resolve.
	ErrGet = "cannot get %s"
	// errNotExist: the object.
	errNotExist = "%s does not exist"
	// errNoKey: the Secret, the key.
	errNoKey = "%s has no key %q"
	// errURL: the Secret.
	errURL = "key url of %s"
	// errBothLogons: the Secret, the certificate's keys.
	errBothLogons = "%s holds both a password (keys username, password) and a client certificate (keys %s): keep one of them"
	// errTwoCertificates, errNoLogon: the Secret.
	errTwoCertificates = "%s holds two client certificates (keys tls.crt, tls.key and pkcs12): keep one of them"
	errNoLogon         = "%s holds no credentials: it needs username and password, or a client certificate (tls.crt and tls.key, or pkcs12 and pkcs12Password)"
	// errNoPasswordKey, errNoPEMKey: the Secret, the key.
	errNoPasswordKey = "%s has no key %q (a password logon needs username and password)"
	errNoPEMKey      = "%s has no key %q (a certificate logon needs tls.crt and tls.key)"
	// errPEM, errPKCS12: the Secret.
	errPEM    = "keys tls.crt and tls.key of %s"
	errPKCS12 = "keys pkcs12 and pkcs12Password of %s"
	// errCertificateInvalid: the Secret, why.
	errCertificateInvalid = "%s: %s; put a valid one in the Secret (it is used at the next call)"
)

// secretOf names a Secret of a ProviderConfig by its role in it: "credentials
// Secret ns/name of ProviderConfig ns/ias".
func secretOf(role string, nn types.NamespacedName, of string) string {
	return fmt.Sprintf("%s Secret %s of %s", role, nn, of)
}
