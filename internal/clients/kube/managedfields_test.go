package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	restwatch "k8s.io/client-go/rest/watch"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// filtered reads in through the filter, the source handing out one byte at a
// time when oneByte is set: a watch's events arrive in pieces of any size.
func filtered(t *testing.T, in string, oneByte bool) string {
	t.Helper()
	var src io.Reader = strings.NewReader(in)
	if oneByte {
		src = iotest.OneByteReader(src)
	}
	out, err := io.ReadAll(newManagedFieldsFilter(io.NopCloser(src)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestManagedFieldsFilter(t *testing.T) {
	const mf = `"managedFields":[{"manager":"provider","operation":"Update","fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"x\"":{}}}}}]`
	cases := map[string]struct {
		reason, in, want string
	}{
		"AMemberBetweenOthers": {
			reason: "managedFields cost memory in every cached object and are never read: they go, wherever they are in the metadata",
			in:     `{"kind":"IASApplication","metadata":{"generation":2,` + mf + `,"name":"a"},"spec":{}}`,
			want:   `{"kind":"IASApplication","metadata":{"generation":2,"name":"a"},"spec":{}}`,
		},
		"TheFirstMember": {
			reason: "as the first member",
			in:     `{"metadata":{` + mf + `,"name":"a","uid":"u"}}`,
			want:   `{"metadata":{"name":"a","uid":"u"}}`,
		},
		"TheLastMember": {
			reason: "as the last",
			in:     `{"metadata":{"name":"a",` + mf + `}}`,
			want:   `{"metadata":{"name":"a"}}`,
		},
		"TheOnlyMember": {
			reason: "as the only one",
			in:     `{"metadata":{` + mf + `}}`,
			want:   `{"metadata":{}}`,
		},
		"Null": {
			reason: "a null value goes too",
			in:     `{"metadata":{"name":"a","managedFields":null,"uid":"u"}}`,
			want:   `{"metadata":{"name":"a","uid":"u"}}`,
		},
		"NullFirst": {
			reason: "also first",
			in:     `{"metadata":{"managedFields":null,"uid":"u"}}`,
			want:   `{"metadata":{"uid":"u"}}`,
		},
		"Indented": {
			reason: "indented JSON stays valid",
			in:     "{\n  \"metadata\": {\n    \"name\": \"a\",\n    \"managedFields\": [\n      {}\n    ],\n    \"uid\": \"u\"\n  }\n}",
			want:   "{\n  \"metadata\": {\n    \"name\": \"a\",\n    \"uid\": \"u\"\n  }\n}",
		},
		"WatchEvents": {
			reason: "in a watch stream, each event's object loses them",
			in: `{"type":"ADDED","object":{"metadata":{"name":"a",` + mf + `}}}` + "\n" +
				`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}` + "\n",
			want: `{"type":"ADDED","object":{"metadata":{"name":"a"}}}` + "\n" +
				`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}` + "\n",
		},
		"ListItems": {
			reason: "so does each item of a list",
			in:     `{"metadata":{"resourceVersion":"9"},"items":[{"metadata":{` + mf + `,"name":"a"}},{"metadata":{"name":"b",` + mf + `}}]}`,
			want:   `{"metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`,
		},
		"NotOutsideMetadata": {
			reason: "a key of that name outside metadata is data, and stays",
			in:     `{"spec":{"managedFields":[1],"metadata":{"managedFields":[2]}},"status":{"managedFields":"x"}}`,
			want:   `{"spec":{"managedFields":[1],"metadata":{"managedFields":[2]}},"status":{"managedFields":"x"}}`,
		},
		"NotInAnnotations": {
			reason: "so is one inside an annotation's value",
			in:     `{"metadata":{"annotations":{"managedFields":"kept"},"labels":{"a":"managedFields"}}}`,
			want:   `{"metadata":{"annotations":{"managedFields":"kept"},"labels":{"a":"managedFields"}}}`,
		},
		"StringsWithQuotesAndBraces": {
			reason: "strings that hold quotes and braces do not confuse the filter",
			in:     `{"metadata":{"name":"a\"},{[","managedFields":[{"m":"}]\\\"]"}],"uid":"\\"},"spec":{"s":"\"metadata\":{"}}`,
			want:   `{"metadata":{"name":"a\"},{[","uid":"\\"},"spec":{"s":"\"metadata\":{"}}`,
		},
		"ALongKey": {
			reason: "a long key is read whole",
			in:     `{"metadata":{"` + strings.Repeat("k", 200) + `":1,` + mf + `}}`,
			want:   `{"metadata":{"` + strings.Repeat("k", 200) + `":1}}`,
		},
		"ASimilarKey": {
			reason: "a key that only begins the same stays",
			in:     `{"metadata":{"managedFieldsX":[1],"managedField":[2]}}`,
			want:   `{"metadata":{"managedFieldsX":[1],"managedField":[2]}}`,
		},
		"NotJSON": {
			reason: "what is not JSON passes as it came",
			in:     `404 page not found`,
			want:   `404 page not found`,
		},
		"CutShort": {
			reason: "so does JSON cut short",
			in:     `{"metadata":{"name":"a","manag`,
			want:   `{"metadata":{"name":"a","manag`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				if diff := cmp.Diff(tc.want, filtered(t, tc.in, oneByte)); diff != "" {
					t.Errorf("%s\none byte at a time %t: -want +got:\n%s", tc.reason, oneByte, diff)
				}
			}
		})
	}
}

// TestManagedFieldsFilterKeepsEverythingElse: for objects of random shape,
// what the filter passes decodes to what the input decodes to without the
// metadata's managedFields.
func TestManagedFieldsFilterKeepsEverythingElse(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		obj := map[string]any{
			"metadata": randomMetadata(r),
			"spec":     randomValue(r, 3),
			"object":   map[string]any{"metadata": randomMetadata(r), "managedFields": randomValue(r, 2)},
			"items":    []any{map[string]any{"metadata": randomMetadata(r)}, randomValue(r, 2)},
		}
		var in []byte
		if i%2 == 0 {
			in, _ = json.Marshal(obj)
		} else {
			in, _ = json.MarshalIndent(obj, "", " ")
		}
		var want, got map[string]any
		_ = json.Unmarshal(in, &want)
		delete(want["metadata"].(map[string]any), "managedFields")
		delete(want["object"].(map[string]any)["metadata"].(map[string]any), "managedFields")
		for _, item := range want["items"].([]any) {
			if item, ok := item.(map[string]any); ok {
				if m, ok := item["metadata"].(map[string]any); ok {
					delete(m, "managedFields")
				}
			}
		}
		out := filtered(t, string(in), i%3 == 0)
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("the filter made invalid JSON of\n%s:\n%s\n%v", in, out, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("input\n%s\n-want +got:\n%s", in, diff)
		}
	}
}

func randomMetadata(r *rand.Rand) map[string]any {
	m := map[string]any{}
	for _, k := range []string{"name", "annotations", "managedFields", "uid", "labels", "finalizers"} {
		if r.IntN(3) > 0 {
			m[k] = randomValue(r, 3)
		}
	}
	return m
}

func randomValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(7); {
	case depth == 0 || n == 0:
		return []string{"plain", `"quoted"`, `back\slash\`, `{[,:]}`, "managedFields", "ünï"}[r.IntN(6)]
	case n == 1:
		return r.Float64() * 1e6
	case n == 2:
		return []any{true, false, nil, -3}[r.IntN(4)]
	case n < 5:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, depth-1)
		}
		return l
	default:
		m := map[string]any{}
		for i := range r.IntN(4) {
			m[[]string{"managedFields", "metadata", "items", "object", fmt.Sprint("k", i)}[r.IntN(5)]] = randomValue(r, depth-1)
		}
		return m
	}
}

// TestStripManagedFields: JSON answers lose the metadata's managedFields, other
// answers pass as they came.
func TestStripManagedFields(t *testing.T) {
	const obj = `{"metadata":{"name":"a","managedFields":[{"manager":"m"}]}}`
	cases := map[string]struct {
		reason, contentType, want string
	}{
		"JSON":         {reason: "a JSON answer loses managedFields", contentType: "application/json", want: `{"metadata":{"name":"a"}}`},
		"JSONCharset":  {reason: "also with a charset", contentType: "application/json;charset=utf-8", want: `{"metadata":{"name":"a"}}`},
		"Protobuf":     {reason: "a protobuf answer passes as it came", contentType: "application/vnd.kubernetes.protobuf", want: obj},
		"NoneDeclared": {reason: "so does one that declares no type", contentType: "", want: obj},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				_, _ = w.Write([]byte(obj))
			}))
			defer srv.Close()
			resp, err := (&http.Client{Transport: StripManagedFields(http.DefaultTransport)}).Get(srv.URL)
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if !bytes.Equal(got, []byte(tc.want)) {
				t.Errorf("%s\ngot %s, want %s", tc.reason, got, tc.want)
			}
		})
	}
}

// BenchmarkWatchEventDecode: what client-go spends decoding a watch event of
// an IASApplication as the API server sends it (its managedFields half of it),
// and through the filter.
func BenchmarkWatchEventDecode(b *testing.B) {
	event := iasApplicationEvent(b)
	scheme := fakes.Scheme()
	metav1.AddToGroupVersion(scheme, iasv1alpha1.SchemeGroupVersion)
	codecs := serializer.NewCodecFactory(scheme)
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	objects := codecs.WithoutConversion().DecoderToVersion(info.Serializer, iasv1alpha1.SchemeGroupVersion)
	for name, filter := range map[string]bool{"AsSent": false, "WithoutManagedFields": true} {
		b.Run(name, func(b *testing.B) {
			var body io.ReadCloser = io.NopCloser(bytes.NewReader(bytes.Repeat(event, b.N)))
			if filter {
				body = newManagedFieldsFilter(body)
			}
			frames := info.StreamSerializer.Framer.NewFrameReader(body)
			d := restwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), objects)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, obj, err := d.Decode(); err != nil || obj.(*iasv1alpha1.IASApplication).Status.AtProvider.ClientID == "" {
					b.Fatal("not decoded", err)
				}
			}
		})
	}
}

// iasApplicationEvent is a watch event of a Ready IASApplication as the API
// server sends it, with the managedFields of its creator and the provider.
func iasApplicationEvent(b *testing.B) []byte {
	fields := func(s string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(s)} }
	at := metav1.Now()
	app := &iasv1alpha1.IASApplication{
		TypeMeta: metav1.TypeMeta{APIVersion: iasv1alpha1.SchemeGroupVersion.String(), Kind: "IASApplication"},
		ObjectMeta: metav1.ObjectMeta{Name: "runtime-0001", Namespace: "kcp-system", UID: "96279597-2291-46c2-89d2-0b6c9940bd6c",
			ResourceVersion: "262", Generation: 2, CreationTimestamp: at, Finalizers: []string{"finalizer.managedresource.crossplane.io"},
			Annotations: map[string]string{"crossplane.io/external-create-pending": "2026-11-24T21:41:03Z",
				"crossplane.io/external-create-succeeded": "2026-11-24T21:41:04Z", "crossplane.io/external-name": "9959bfbb-e6e7-4237-b439-e7c97533fc21"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "crossplane", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "ias.eventingauth.kyma-project.io/v1alpha1", Time: &at, FieldsType: "FieldsV1",
					FieldsV1: fields(`{"f:spec":{".":{},"f:forProvider":{".":{},"f:secret":{".":{},"f:authorizationScopes":{},"f:description":{},"f:retireAfter":{}}},"f:managementPolicies":{},"f:providerConfigRef":{".":{},"f:kind":{},"f:name":{}},"f:writeConnectionSecretToRef":{".":{},"f:name":{}}}}`)},
				{Manager: "provider", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "ias.eventingauth.kyma-project.io/v1alpha1", Time: &at, FieldsType: "FieldsV1",
					FieldsV1: fields(`{"f:metadata":{"f:annotations":{".":{},"f:crossplane.io/external-create-pending":{},"f:crossplane.io/external-create-succeeded":{},"f:crossplane.io/external-name":{}},"f:finalizers":{".":{},"v:\"finalizer.managedresource.crossplane.io\"":{}}}}`)},
				{Manager: "provider", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "ias.eventingauth.kyma-project.io/v1alpha1", Time: &at, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: fields(`{"f:status":{".":{},"f:atProvider":{".":{},"f:certsURL":{},"f:clientId":{},"f:id":{},"f:secretHint":{},"f:secretId":{},"f:secretPublishedAt":{},"f:secretsCheckedAt":{},"f:tokenURL":{}},"f:conditions":{".":{},"k:{\"type\":\"CertsURLFitsIssuer\"}":{".":{},"f:lastTransitionTime":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Synced\"}":{".":{},"f:lastTransitionTime":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`)},
			}},
	}
	app.Spec.ForProvider.Secret.AuthorizationScopes = []string{"oAuth"}
	app.Spec.ForProvider.Secret.Description = "eventing-auth"
	app.Status.AtProvider = iasv1alpha1.IASApplicationObservation{ID: "9959bfbb-e6e7-4237-b439-e7c97533fc21", ClientID: "8db1694d-b0b7-4ee7-83a4-02260b680430",
		SecretID: "56e0894a-e575-4a19-80f1-0a803efb87af", SecretHint: "BqAr",
		CertsURL: "https://tenant.accounts.ondemand.com/oauth2/certs", TokenURL: "https://tenant.accounts.ondemand.com/oauth2/token"}
	app.SetConditions(xpv2.Available(), xpv2.ReconcileSuccess())
	raw, err := json.Marshal(app)
	if err != nil {
		b.Fatal(err)
	}
	event, err := json.Marshal(metav1.WatchEvent{Type: "MODIFIED", Object: runtime.RawExtension{Raw: raw}})
	if err != nil {
		b.Fatal(err)
	}
	return append(event, '\n')
}
