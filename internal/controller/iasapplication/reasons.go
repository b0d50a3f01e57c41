package iasapplication

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// Reasons of this controller's conditions, beyond crossplane-runtime's.
const (
	// ReasonWaitingForRuntimeSecrets: Ready while a deletion waits for the
	// RuntimeSecrets that use the app.
	ReasonWaitingForRuntimeSecrets xpv2.ConditionReason = "WaitingForRuntimeSecrets"
	// ReasonFitsIssuer, ReasonNotUnderIssuer: of TypeCertsURL.
	ReasonFitsIssuer     xpv2.ConditionReason = "FitsIssuer"
	ReasonNotUnderIssuer xpv2.ConditionReason = "NotUnderIssuer"
	// Of TypeRotation.
	reasonRotated        xpv2.ConditionReason = "Rotated"
	reasonRotationFailed xpv2.ConditionReason = "RotationFailed"
	reasonRotationWaits  xpv2.ConditionReason = "RotationWaits"
)

// Reasons of this controller's events, beyond crossplane-runtime's. An event
// that tells what a condition says carries the condition's reason.
const (
	eventAdopted             event.Reason = "AdoptedExternalResource"
	eventNewSecret           event.Reason = "PublishedNewClientSecret"
	eventRetiringSecret      event.Reason = "RetiringClientSecret"
	eventDeletedSecret       event.Reason = "DeletedStaleClientSecret"
	eventDeletedDuplicate    event.Reason = "DeletedDuplicateApplication"
	eventLeftToOwner         event.Reason = "LeftApplicationToOwner"
	eventHandedOver          event.Reason = "HandedOverApplication"
	eventRejected            event.Reason = "CredentialsRejected"
	eventCertsURL            event.Reason = "CertsURLNotUnderIssuer"
	eventCertificateExpiring event.Reason = "ClientCertificateExpiring"
	eventRotationWaits                    = event.Reason(reasonRotationWaits)
	eventRotationFailed                   = event.Reason(reasonRotationFailed)
)
