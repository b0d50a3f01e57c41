package iasapplication

import (
	"time"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/internal/controller/providerconfig"
	"github.com/kyma-project/provider-eventing-auth/internal/secretmetrics"
)

// Config is what the IASApplication controller is set up with beyond what all
// controllers share; package provider builds it from the settings.
type Config struct {
	// IAS hands out the tenants' clients and knows which credentials IAS
	// rejected.
	IAS *ias.Pool
	// Inventories lists each tenant's apps for the polls, over IAS's clients.
	Inventories *inventory.Tenants
	// ListSettle bounds how long IAS's lists may lag behind a create.
	ListSettle time.Duration
	// InventoryAge is how old the tenant listing that polls read may be.
	InventoryAge time.Duration
	// SecretCheck is how often each app's api secrets are listed at the least.
	SecretCheck time.Duration
	// ProviderConfigs resolves a resource's ProviderConfig into its tenant.
	ProviderConfigs providerconfig.Resolver
	// SecretMetrics exports the published client secrets' state; nil: none.
	SecretMetrics *secretmetrics.Metrics
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
