package iasapplication

import (
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	apisv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
)

// CertificateWarning is how long before its client certificate expires a
// ProviderConfig gets a daily Warning event.
const CertificateWarning = 30 * 24 * time.Hour

// reportCertificate puts the expiry of the client certificate a ProviderConfig
// logs in with into the metrics and, from CertificateWarning before it, into
// one Warning event a day on the ProviderConfig.
func (c *connector) reportCertificate(cfg tenantconfig.Resolved, now time.Time) {
	pc := cfg.ProviderConfig
	if pc == nil {
		return
	}
	name := "ClusterProviderConfig/" + pc.GetName()
	if _, ok := pc.(*apisv1alpha1.ProviderConfig); ok {
		name = "ProviderConfig/" + pc.GetNamespace() + "/" + pc.GetName()
	}
	cert := cfg.Tenant.ClientCert
	if cert == nil {
		c.secretMetrics.ClientCertificate(name, nil)
		return
	}
	c.secretMetrics.ClientCertificate(name, &cert.NotAfter)
	left := cert.NotAfter.Sub(now)
	if left > CertificateWarning {
		return
	}
	key := fmt.Sprintf("%s/%d/%s", name, cert.NotAfter.Unix(), now.UTC().Format(time.DateOnly))
	if !c.told.first("certificate/" + key) {
		return
	}
	c.recorder.Event(pc, event.Warning(eventCertificateExpiring, fmt.Errorf(
		"the client certificate (%s) that logs in to IAS tenant %s expires at %s, in %d days: put a renewed one in the credentials Secret; it is used at the next call, without a restart",
		cert.Subject, cfg.Tenant.URL, cert.NotAfter.UTC().Format(time.RFC3339), int(left.Hours()/24))))
}
