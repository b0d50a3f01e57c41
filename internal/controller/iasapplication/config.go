package iasapplication

import (
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
	"github.com/kyma-project/provider-eventing-auth/internal/secretmetrics"
)

// Config is what the IASApplication controller is set up with beyond what all
// controllers share; package provider builds it from the settings.
type Config struct {
	// Logons knows which credentials IAS rejected and recalls failures into
	// the tenants' circuits (the IAS pool).
	Logons *ias.Pool
	// TenantClients hands out each tenant's client, whose polls read one
	// listing of the tenant's apps (the inventories over the IAS pool).
	TenantClients *inventory.Tenants
	// ListSettle bounds how long IAS's lists may lag behind a create.
	ListSettle time.Duration
	// InventoryAge is how old the tenant listing that polls read may be.
	InventoryAge time.Duration
	// SecretCheck is how often each app's api secrets are listed at the least.
	SecretCheck time.Duration
	// ProviderConfigs resolves a resource's ProviderConfig into its tenant.
	ProviderConfigs tenantconfig.Resolver
	// SecretMetrics exports the published client secrets' state; nil: none.
	SecretMetrics *secretmetrics.Metrics
	// NameClaims claims app names before a create or a rename; nil: none.
	NameClaims NameClaims
}

// Defaulted fills in what is unset. Package provider bounds the inventory's
// age by the poll interval: a poll never reads a listing older than itself.
func (c Config) Defaulted() Config {
	if c.ListSettle <= 0 {
		c.ListSettle = DefaultListSettle
	}
	if c.InventoryAge <= 0 {
		c.InventoryAge = DefaultInventoryAge
	}
	if c.SecretCheck <= 0 {
		c.SecretCheck = DefaultSecretCheck
	}
	return c
}
