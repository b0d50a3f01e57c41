package kymabridge

import "github.com/crossplane/crossplane-runtime/v2/pkg/event"

// Reasons of the bridge's events on a Kyma CR.
const (
	eventDefinitionMissing event.Reason = "EventingAuthDefinitionMissing"
	eventCannotApply       event.Reason = "CannotApplyEventingAuth"
	eventDefinitionDeleted event.Reason = "EventingAuthDefinitionDeleted"
)
