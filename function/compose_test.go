package main

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
)

const xrNew = `{"apiVersion":"composite.eventingauth.kyma-project.io/v1alpha1","kind":"EventingAuth",
	"metadata":{"name":"rt-1","namespace":"kcp-system"},"spec":{"runtimeId":"rt-1","globalAccount":"ga-1"}}`

const appNew = `{"apiVersion":"ias.eventingauth.kyma-project.io/v1alpha1","kind":"IASApplication","metadata":{"name":"rt-1"},
	"spec":{"forProvider":{"name":"rt-1","globalAccount":"ga-1"},"writeConnectionSecretToRef":{"name":"rt-1-ias"}}}`

const runtimeSecretNew = `{"apiVersion":"runtime.eventingauth.kyma-project.io/v1alpha1","kind":"RuntimeSecret","metadata":{"name":"rt-1"},
	"spec":{"forProvider":{"runtimeId":"rt-1","applicationRef":{"name":"rt-1"}}}}`

func composedOf(js string) *fnv1.Resource {
	return &fnv1.Resource{Resource: resource.MustStructJSON(js)}
}

func TestRunFunction(t *testing.T) {
	readyApp := `{"apiVersion":"ias.eventingauth.kyma-project.io/v1alpha1","kind":"IASApplication","metadata":{"name":"rt-1"},
		"status":{"atProvider":{"id":"uuid-1","clientId":"client-1"},"conditions":[{"type":"Ready","status":"True","reason":"Available"}]}}`
	readySecret := `{"apiVersion":"runtime.eventingauth.kyma-project.io/v1alpha1","kind":"RuntimeSecret","metadata":{"name":"rt-1"},
		"status":{"conditions":[{"type":"Ready","status":"True","reason":"Available"}]}}`
	waitingSecret := `{"apiVersion":"runtime.eventingauth.kyma-project.io/v1alpha1","kind":"RuntimeSecret","metadata":{"name":"rt-1"},
		"status":{"conditions":[{"type":"Ready","status":"False","reason":"Waiting"}]}}`
	cases := map[string]struct {
		reason   string
		xr       string
		observed map[string]*fnv1.Resource
		desired  map[string]*fnv1.Resource // from earlier steps of the pipeline
		want     *fnv1.RunFunctionResponse
	}{
		"NewRuntime": {
			reason: "A new EventingAuth gets its IASApplication and RuntimeSecret, neither ready, and no status.",
			xr:     xrNew,
			want: answer(nil, map[string]*fnv1.Resource{
				"application":    {Resource: resource.MustStructJSON(appNew), Ready: fnv1.Ready_READY_FALSE},
				"runtime-secret": {Resource: resource.MustStructJSON(runtimeSecretNew), Ready: fnv1.Ready_READY_FALSE},
			}, nil),
		},
		"NoGlobalAccount": {
			reason: "Without a global account the IASApplication names none, and the ProviderConfig's applies.",
			xr: `{"apiVersion":"composite.eventingauth.kyma-project.io/v1alpha1","kind":"EventingAuth",
				"metadata":{"name":"rt-1","namespace":"kcp-system"},"spec":{"runtimeId":"rt-1"}}`,
			want: answer(nil, map[string]*fnv1.Resource{
				"application": {Resource: resource.MustStructJSON(`{"apiVersion":"ias.eventingauth.kyma-project.io/v1alpha1","kind":"IASApplication","metadata":{"name":"rt-1"},
					"spec":{"forProvider":{"name":"rt-1"},"writeConnectionSecretToRef":{"name":"rt-1-ias"}}}`), Ready: fnv1.Ready_READY_FALSE},
				"runtime-secret": {Resource: resource.MustStructJSON(runtimeSecretNew), Ready: fnv1.Ready_READY_FALSE},
			}, nil),
		},
		"KymaGlobalAccount": {
			reason: "The Kyma CR's global account, which the bridge puts on the EventingAuth as an annotation, goes on to the IASApplication as one, not as its globalAccount.",
			xr: `{"apiVersion":"composite.eventingauth.kyma-project.io/v1alpha1","kind":"EventingAuth",
				"metadata":{"name":"rt-1","namespace":"kcp-system","annotations":{"eventingauth.kyma-project.io/kyma-global-account":"ga-kyma"}},
				"spec":{"runtimeId":"rt-1"}}`,
			want: answer(nil, map[string]*fnv1.Resource{
				"application": {Resource: resource.MustStructJSON(`{"apiVersion":"ias.eventingauth.kyma-project.io/v1alpha1","kind":"IASApplication",
					"metadata":{"name":"rt-1","annotations":{"eventingauth.kyma-project.io/kyma-global-account":"ga-kyma"}},
					"spec":{"forProvider":{"name":"rt-1"},"writeConnectionSecretToRef":{"name":"rt-1-ias"}}}`), Ready: fnv1.Ready_READY_FALSE},
				"runtime-secret": {Resource: resource.MustStructJSON(runtimeSecretNew), Ready: fnv1.Ready_READY_FALSE},
			}, nil),
		},
		"Migrated": {
			reason: "An EventingAuth taken over from eventing-auth-manager names the app to adopt and its secrets' marker.",
			xr: `{"apiVersion":"composite.eventingauth.kyma-project.io/v1alpha1","kind":"EventingAuth",
				"metadata":{"name":"rt-1","namespace":"kcp-system","annotations":{
					"eventingauth.kyma-project.io/application-id":"uuid-old","eventingauth.kyma-project.io/secret-description":"eventing-auth-manager"}},
				"spec":{"runtimeId":"rt-1","globalAccount":"ga-1"}}`,
			want: answer(nil, map[string]*fnv1.Resource{
				"application": {Resource: resource.MustStructJSON(`{"apiVersion":"ias.eventingauth.kyma-project.io/v1alpha1","kind":"IASApplication",
					"metadata":{"name":"rt-1","annotations":{"crossplane.io/external-name":"uuid-old"}},
					"spec":{"forProvider":{"name":"rt-1","globalAccount":"ga-1","secret":{"description":"eventing-auth-manager"}},
						"writeConnectionSecretToRef":{"name":"rt-1-ias"}}}`), Ready: fnv1.Ready_READY_FALSE},
				"runtime-secret": {Resource: resource.MustStructJSON(runtimeSecretNew), Ready: fnv1.Ready_READY_FALSE},
			}, nil),
		},
		"AppReadySecretWaiting": {
			reason: "Readiness is each composed resource's Ready condition; the app's identity goes to the status once known.",
			xr:     xrNew,
			observed: map[string]*fnv1.Resource{
				"application": composedOf(readyApp), "runtime-secret": composedOf(waitingSecret),
			},
			want: answer(map[string]any{"applicationId": "uuid-1", "clientId": "client-1"}, map[string]*fnv1.Resource{
				"application":    {Resource: resource.MustStructJSON(appNew), Ready: fnv1.Ready_READY_TRUE},
				"runtime-secret": {Resource: resource.MustStructJSON(runtimeSecretNew), Ready: fnv1.Ready_READY_FALSE},
			}, nil),
		},
		"AllReady": {
			reason: "Both Ready: the EventingAuth is ready, and core may keep the answer for an hour.",
			xr:     xrNew,
			observed: map[string]*fnv1.Resource{
				"application": composedOf(readyApp), "runtime-secret": composedOf(readySecret),
			},
			want: answer(map[string]any{"applicationId": "uuid-1", "clientId": "client-1"}, map[string]*fnv1.Resource{
				"application":    {Resource: resource.MustStructJSON(appNew), Ready: fnv1.Ready_READY_TRUE},
				"runtime-secret": {Resource: resource.MustStructJSON(runtimeSecretNew), Ready: fnv1.Ready_READY_TRUE},
			}, nil),
		},
		"KeepsEarlierSteps": {
			reason: "What an earlier step of the pipeline composed stays.",
			xr:     xrNew,
			desired: map[string]*fnv1.Resource{
				"extra": {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`)},
			},
			want: answer(nil, map[string]*fnv1.Resource{
				"extra":          {Resource: resource.MustStructJSON(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`)},
				"application":    {Resource: resource.MustStructJSON(appNew), Ready: fnv1.Ready_READY_FALSE},
				"runtime-secret": {Resource: resource.MustStructJSON(runtimeSecretNew), Ready: fnv1.Ready_READY_FALSE},
			}, nil),
		},
		"NoRuntimeID": {
			reason: "An EventingAuth without a runtime ID composes nothing and says why.",
			xr: `{"apiVersion":"composite.eventingauth.kyma-project.io/v1alpha1","kind":"EventingAuth",
				"metadata":{"name":"rt-1","namespace":"kcp-system"},"spec":{}}`,
			want: answer(nil, nil, []*fnv1.Result{{Severity: fnv1.Severity_SEVERITY_FATAL,
				Message: "spec.runtimeId of EventingAuth rt-1 is empty", Target: fnv1.Target_TARGET_COMPOSITE.Enum()}}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{
				Meta:     &fnv1.RequestMeta{Tag: "tag"},
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(tc.xr)}, Resources: tc.observed},
				Desired:  &fnv1.State{Resources: tc.desired},
			}
			f := &Function{log: logging.NewNopLogger()}
			got, err := f.RunFunction(context.Background(), req)
			if err != nil {
				t.Fatalf("RunFunction: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nRunFunction(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// answer is what RunFunction should answer: the desired XR status (nil for
// none), the desired composed resources and any results, kept for DefaultTTL.
func answer(status map[string]any, resources map[string]*fnv1.Resource, results []*fnv1.Result) *fnv1.RunFunctionResponse {
	rsp := &fnv1.RunFunctionResponse{
		Meta:    &fnv1.ResponseMeta{Tag: "tag", Ttl: durationpb.New(DefaultTTL)},
		Desired: &fnv1.State{Resources: resources},
		Results: results,
	}
	if status != nil {
		s, err := structpb.NewStruct(map[string]any{"status": status})
		if err != nil {
			panic(err)
		}
		rsp.Desired.Composite = &fnv1.Resource{Resource: s}
	}
	return rsp
}

func TestTTL(t *testing.T) {
	cases := map[string]struct {
		reason string
		ttl    time.Duration
		want   time.Duration
	}{
		"Default": {
			reason: "Without --ttl core may keep an answer for ten hours, eventing-auth-manager's resync.",
			want:   10 * time.Hour,
		},
		"Configured": {
			reason: "--ttl sets how long core may keep an answer.",
			ttl:    2 * time.Hour,
			want:   2 * time.Hour,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &fnv1.RunFunctionRequest{Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(
				`{"apiVersion":"composite.eventingauth.kyma-project.io/v1alpha1","kind":"EventingAuth","metadata":{"name":"rt-1"},"spec":{"runtimeId":"rt-1"}}`)}}}
			got, err := (&Function{log: logging.NewNopLogger(), ttl: tc.ttl}).RunFunction(context.Background(), req)
			if err != nil {
				t.Fatalf("RunFunction: %v", err)
			}
			if d := got.GetMeta().GetTtl().AsDuration(); d != tc.want {
				t.Errorf("%s\nRunFunction(...): TTL %s, want %s", tc.reason, d, tc.want)
			}
		})
	}
}
