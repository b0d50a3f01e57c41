// Package fakes holds what unit tests share to stand in for the cluster: the
// scheme of a fake client, and an event recorder that keeps what it is told.
package fakes

import (
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kyma-project/provider-eventing-auth/apis"
)

// Scheme knows Kubernetes' built-in kinds, this provider's kinds and those
// that more adds; it panics if one cannot be added, which only a broken
// build can cause.
func Scheme(more ...func(*runtime.Scheme) error) *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apis.AddToScheme}, more...) {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// Events is an event.Recorder that keeps every event it is told, in order.
type Events struct {
	mu     sync.Mutex
	events []event.Event
}

// Event keeps e.
func (r *Events) Event(_ runtime.Object, e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// WithAnnotations returns the same recorder: annotations are not kept.
func (r *Events) WithAnnotations(...string) event.Recorder { return r }

// All are the events told so far.
func (r *Events) All() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

// Reasons are the reasons of the events told so far, in order.
func (r *Events) Reasons() []string {
	var out []string
	for _, e := range r.All() {
		out = append(out, string(e.Reason))
	}
	return out
}
