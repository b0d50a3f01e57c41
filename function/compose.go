package main

import (
	"cmp"
	"context"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What this function composes and reads. The function is a module of its own,
// packaged and released apart from the provider, so these names are the
// provider's, written out again; the Composition's render test holds the
// composed resources to the provider's CRDs.
var (
	iasApplication    = schema.GroupVersionKind{Group: "ias.eventingauth.kyma-project.io", Version: "v1alpha1", Kind: "IASApplication"}
	runtimeSecretKind = schema.GroupVersionKind{Group: "runtime.eventingauth.kyma-project.io", Version: "v1alpha1", Kind: "RuntimeSecret"}
)

// Annotations on an EventingAuth that the migration from eventing-auth-manager
// sets (the provider's internal/eventingauth).
const (
	annotationApplicationID     = "eventingauth.kyma-project.io/application-id"
	annotationSecretDescription = "eventingauth.kyma-project.io/secret-description"
	annotationExternalName      = "crossplane.io/external-name"
	// annotationKymaGlobalAccount is the Kyma CR's global account label, which
	// the kyma bridge puts on the EventingAuth and which goes on to the
	// IASApplication as it is: the provider sends it to IAS only where the
	// ProviderConfig asks for it.
	annotationKymaGlobalAccount = "eventingauth.kyma-project.io/kyma-global-account"
)

// DefaultTTL is how long Crossplane core may keep this function's answer
// unless --ttl says otherwise. With realtime compositions core re-runs a
// composition when its TTL runs out, and also whenever the EventingAuth or a
// composed resource changes, and at every resync of its informers (core's
// --sync-interval: the EventingAuth's, each composed kind's and the
// CompositionRevision's, each waking every EventingAuth). Each re-run
// re-applies the EventingAuth, its status and both composed resources, changed
// or not: four writes. The TTL only backs up the watches, so it is as long as
// eventing-auth-manager's resync; the SDK's default of a minute cost every
// EventingAuth those writes every minute (docs/performance.md).
const DefaultTTL = 10 * time.Hour

// The composed resources' names within the Composition. They are the names the
// Composition gave them before this function existed, so an EventingAuth
// composed earlier keeps its resources.
const (
	nameApplication   resource.Name = "application"
	nameRuntimeSecret resource.Name = "runtime-secret"
)

// Error messages.
const (
	errObservedXR   = "cannot read the observed EventingAuth"
	errDesiredXR    = "cannot read the desired EventingAuth"
	errObserved     = "cannot read the observed composed resources"
	errDesired      = "cannot read the desired composed resources"
	errNoRuntimeID  = "spec.runtimeId of EventingAuth %s is empty"
	errSetDesired   = "cannot set the desired composed resources"
	errSetDesiredXR = "cannot set the desired EventingAuth status"
)

// Function composes an EventingAuth: the IASApplication named after it, the
// RuntimeSecret that copies the app's connection Secret to the runtime, their
// readiness and the app's identity on the EventingAuth's status.
//
// The order of deletion (the runtime's Secret before the
// IAS app) is the IASApplication controller's: it holds an app's deletion while
// a RuntimeSecret uses it, so no Usage is composed.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
	// ttl is how long core may keep an answer; DefaultTTL if zero.
	ttl time.Duration
}

// RunFunction composes one EventingAuth.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, cmp.Or(f.ttl, DefaultTTL))

	xr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errObservedXR))
		return rsp, nil
	}
	runtimeID, _ := xr.Resource.GetString("spec.runtimeId")
	if runtimeID == "" {
		response.Fatal(rsp, errors.Errorf(errNoRuntimeID, xr.Resource.GetName()))
		return rsp, nil
	}
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errObserved))
		return rsp, nil
	}
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errDesired))
		return rsp, nil
	}

	globalAccount, _ := xr.Resource.GetString("spec.globalAccount")
	for name, cd := range map[resource.Name]*composed.Unstructured{
		nameApplication:   application(xr.Resource.GetName(), runtimeID, globalAccount, xr.Resource.GetAnnotations()),
		nameRuntimeSecret: runtimeSecret(xr.Resource.GetName(), runtimeID),
	} {
		desired[name] = &resource.DesiredComposed{Resource: cd, Ready: readiness(observed, name)}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		response.Fatal(rsp, errors.Wrap(err, errSetDesired))
		return rsp, nil
	}

	app, ok := observed[nameApplication]
	if !ok {
		return rsp, nil
	}
	id, _ := app.Resource.GetString("status.atProvider.id")
	clientID, _ := app.Resource.GetString("status.atProvider.clientId")
	if id == "" && clientID == "" {
		return rsp, nil
	}
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, errDesiredXR))
		return rsp, nil
	}
	_ = dxr.Resource.SetString("status.applicationId", id)
	_ = dxr.Resource.SetString("status.clientId", clientID)
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		response.Fatal(rsp, errors.Wrap(err, errSetDesiredXR))
	}
	return rsp, nil
}

// application is the IASApplication of EventingAuth name. An EventingAuth
// migrated from eventing-auth-manager names the app to take over and the
// marker of its secrets in annotations.
func application(name, runtimeID, globalAccount string, annotations map[string]string) *composed.Unstructured {
	cd := composed.New()
	cd.SetGroupVersionKind(iasApplication)
	cd.SetName(name)
	ann := map[string]string{}
	if id := annotations[annotationApplicationID]; id != "" {
		ann[annotationExternalName] = id
	}
	if ga := annotations[annotationKymaGlobalAccount]; ga != "" {
		ann[annotationKymaGlobalAccount] = ga
	}
	if len(ann) > 0 {
		cd.SetAnnotations(ann)
	}
	forProvider := map[string]any{"name": runtimeID}
	if globalAccount != "" {
		forProvider["globalAccount"] = globalAccount
	}
	if d := annotations[annotationSecretDescription]; d != "" {
		forProvider["secret"] = map[string]any{"description": d}
	}
	cd.Object["spec"] = map[string]any{
		"forProvider":                forProvider,
		"writeConnectionSecretToRef": map[string]any{"name": name + "-ias"},
	}
	return cd
}

// runtimeSecret is the RuntimeSecret of EventingAuth name: it copies the
// IASApplication's connection Secret to the runtime.
func runtimeSecret(name, runtimeID string) *composed.Unstructured {
	cd := composed.New()
	cd.SetGroupVersionKind(runtimeSecretKind)
	cd.SetName(name)
	cd.Object["spec"] = map[string]any{"forProvider": map[string]any{
		"runtimeId":      runtimeID,
		"applicationRef": map[string]any{"name": name},
	}}
	return cd
}

// readiness is a composed resource's Ready condition, as function-auto-ready
// reads it; one not yet observed is not ready.
func readiness(observed map[resource.Name]resource.ObservedComposed, name resource.Name) resource.Ready {
	o, ok := observed[name]
	if !ok {
		return resource.ReadyFalse
	}
	if o.Resource.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
		return resource.ReadyTrue
	}
	return resource.ReadyFalse
}
