// Package operation names the operations of the IAS Application Directory API,
// once for the client (metrics, errors) and the simulator (counts, faults).
package operation

// The operations, as they appear in metrics, errors and the simulator's stats.
const (
	ListApplications  = "list_applications"
	CreateApplication = "create_application"
	GetApplication    = "get_application"
	PatchApplication  = "patch_application"
	UpdateApplication = "update_application"
	DeleteApplication = "delete_application"
	ListAPISecrets    = "list_api_secrets"
	CreateAPISecret   = "create_api_secret"
	DeleteAPISecret   = "delete_api_secret"
	WellKnown         = "well_known"
)
