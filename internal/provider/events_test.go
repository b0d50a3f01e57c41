package provider

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// TestSpamKey: events of one object share an allowance only when their type
// and reason are the same.
func TestSpamKey(t *testing.T) {
	event := func(object, typ, reason string) *corev1.Event {
		return &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "RuntimeSecret", Namespace: "kcp", Name: object, UID: types.UID("uid-" + object)},
			Type: typ, Reason: reason, Message: "any " + reason}
	}
	refused := event("rt-1", corev1.EventTypeWarning, "CannotObserveExternalResource")
	cases := map[string]struct {
		reason string
		other  *corev1.Event
		same   bool
	}{
		"the same complaint again, other words": {reason: "the same complaint about the same object is one key, whatever its words, so that a flapping error is not a new event each time", other: &corev1.Event{InvolvedObject: refused.InvolvedObject, Type: refused.Type, Reason: refused.Reason, Message: "other words"}, same: true},
		"another reason":                        {reason: "another reason is another key", other: event("rt-1", corev1.EventTypeWarning, "CannotUpdateExternalResource")},
		"a Normal event":                        {reason: "so is another type", other: event("rt-1", corev1.EventTypeNormal, "CreatedExternalResource")},
		"another object":                        {reason: "and another object", other: event("rt-2", corev1.EventTypeWarning, "CannotObserveExternalResource")},
	}
	for name, tc := range cases {
		if got := spamKey(refused) == spamKey(tc.other); got != tc.same {
			t.Errorf("%s\n%s: same key %v, want %v", tc.reason, name, got, tc.same)
		}
	}
}

// TestEventsInProtobuf: events go to the sink the broadcaster was given, in
// protobuf, whatever sink it is started with (controller-runtime starts it
// with a JSON client of its own).
func TestEventsInProtobuf(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case got <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type"):
		default:
		}
		// The API server answers with the event it stored, in the type asked for.
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	sink, err := newEventSink(&rest.Config{Host: srv.URL}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	b := newEventBroadcaster()
	defer b.Shutdown()
	b.recordTo(sink)
	b.StartRecordingToSink(failingSink{t})
	b.NewRecorder(clientgoscheme.Scheme, corev1.EventSource{Component: "test"}).
		Event(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp", Name: "s", UID: "uid-s"}}, corev1.EventTypeNormal, "Made", "made it")
	select {
	case req := <-got:
		if want := "POST /api/v1/namespaces/kcp/events " + runtime.ContentTypeProtobuf; req != want {
			t.Errorf("request %q, want %q", req, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event was written")
	}
}

// failingSink is the sink a broadcaster must not write to.
type failingSink struct{ t *testing.T }

func (s failingSink) Create(*corev1.Event) (*corev1.Event, error) {
	s.t.Error("event written to the sink the broadcaster was started with")
	return nil, nil
}

func (s failingSink) Update(*corev1.Event) (*corev1.Event, error) { return s.Create(nil) }

func (s failingSink) Patch(*corev1.Event, []byte) (*corev1.Event, error) { return s.Create(nil) }
