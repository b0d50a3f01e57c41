package runtimesecret

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// Reasons of this controller's conditions, beyond crossplane-runtime's.
const (
	// reasonWaiting: Ready while a prerequisite is missing.
	reasonWaiting xpv2.ConditionReason = "Waiting"
)

// Reasons of this controller's events, beyond crossplane-runtime's.
const (
	eventRuntimeGone       event.Reason = "RuntimeGone"
	eventLeftUnmanaged     event.Reason = "LeftUnmanagedSecret"
	eventReplacedWrongType event.Reason = "ReplacedSecretOfWrongType"
	eventGaveUpOnRuntime   event.Reason = "DeletedWhileRuntimeUnreachable"
	eventSecretFought      event.Reason = "SecretFought"
)
