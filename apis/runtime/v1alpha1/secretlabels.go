package v1alpha1

// The label that marks the Secrets a RuntimeSecret writes on its runtime. A
// Secret without it is never overwritten or deleted; migration from
// eventing-auth-manager adds it to the Secrets it hands over.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "provider-eventing-auth"
)
