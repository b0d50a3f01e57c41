package iasapplication

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/inventory"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
)

// fakeIAS is an in-memory tenant that records the calls that change it.
type fakeIAS struct {
	apps    []ias.Application
	secrets map[string][]ias.APISecret
	// unlisted apps exist but are not yet in filtered lists.
	unlisted map[string]bool
	calls    []string
	reads    int
	next     int
	// createSecretErr fails every secret creation.
	createSecretErr error
}

var _ inventory.Client = &fakeIAS{}

func (f *fakeIAS) FindApplications(_ context.Context, name string) ([]ias.Application, error) {
	f.reads++
	var out []ias.Application
	for _, a := range f.apps {
		if a.Name == name && !f.unlisted[a.ID] {
			out = append(out, a)
		}
	}
	return out, nil
}

func (f *fakeIAS) GetApplication(_ context.Context, id string) (*ias.Application, error) {
	f.reads++
	for i := range f.apps {
		if f.apps[i].ID == id {
			a := f.apps[i]
			return &a, nil
		}
	}
	return nil, &ias.APIError{Operation: operation.GetApplication, StatusCode: 404}
}

func (f *fakeIAS) CreateApplication(_ context.Context, s ias.ApplicationSpec) (string, error) {
	f.next++
	id := fmt.Sprintf("new-app-%d", f.next)
	f.apps = append(f.apps, ias.Application{ID: id, Name: s.Name, DisplayName: s.DisplayName, Description: s.Description,
		SSOType: ias.SSOTypeOIDC, Type: ias.TypeCharged, ClientID: "client-" + id})
	f.calls = append(f.calls, "create app "+s.Name)
	return id, nil
}

func (f *fakeIAS) PatchApplication(_ context.Context, id string, p []ias.Patch) error {
	for _, x := range p {
		f.calls = append(f.calls, fmt.Sprintf("patch %s %s", id, x.Path))
		for i := range f.apps {
			if f.apps[i].ID == id && x.Path == ias.PathDescription {
				f.apps[i].Description = x.Value
			}
		}
	}
	return nil
}

func (f *fakeIAS) DeleteApplication(_ context.Context, id string) error {
	f.calls = append(f.calls, "delete app "+id)
	for i, a := range f.apps {
		if a.ID == id {
			f.apps = slices.Delete(f.apps, i, i+1)
			return nil
		}
	}
	return &ias.APIError{Operation: "delete_application", StatusCode: 404}
}

func (f *fakeIAS) CreateAPISecret(_ context.Context, appID string, s ias.SecretSpec) (*ias.APISecret, error) {
	if f.createSecretErr != nil {
		return nil, f.createSecretErr
	}
	f.next++
	sec := ias.APISecret{ID: fmt.Sprintf("sec-%d", f.next), ClientID: "client-" + appID, Hint: fmt.Sprintf("h%03d", f.next),
		Description: s.Description, ValidTo: s.ValidTo}
	sec.Value = sec.Hint + "-value"
	if f.secrets == nil {
		f.secrets = map[string][]ias.APISecret{}
	}
	stored := sec
	stored.Value = ""
	f.secrets[appID] = append(f.secrets[appID], stored)
	f.calls = append(f.calls, "create secret "+sec.ID)
	return &sec, nil
}

func (f *fakeIAS) ListAPISecrets(_ context.Context, appID string) ([]ias.APISecret, error) {
	f.reads++
	return slices.Clone(f.secrets[appID]), nil
}

func (f *fakeIAS) DeleteAPISecret(_ context.Context, appID, secretID string) error {
	f.calls = append(f.calls, "delete secret "+secretID)
	f.secrets[appID] = slices.DeleteFunc(f.secrets[appID], func(s ias.APISecret) bool { return s.ID == secretID })
	return nil
}

func (f *fakeIAS) ListedApplication(_ context.Context, id string, _ time.Duration) (ias.Application, bool, error) {
	f.reads++
	for _, a := range f.apps {
		if a.ID == id && !f.unlisted[id] {
			return a, true, nil
		}
	}
	return ias.Application{}, false, nil
}

func (f *fakeIAS) ListApplications(_ context.Context, eachPage func([]ias.Application)) error {
	f.reads++
	eachPage(slices.DeleteFunc(slices.Clone(f.apps), func(a ias.Application) bool { return f.unlisted[a.ID] }))
	return nil
}

func (f *fakeIAS) Generation() uint64 { return 1 }

func (f *fakeIAS) Endpoints(context.Context) (ias.Endpoints, error) {
	return ias.Endpoints{TokenURL: "https://t/oauth2/token", CertsURL: "https://t/oauth2/certs", Issuer: "https://t"}, nil
}

// usersFn answers Users.NotYetCarrying: one user, carrying the data unless
// fn names what waits.
type usersFn func(dataHash string) string

func (fn usersFn) NotYetCarrying(_ context.Context, _ *v1alpha1.IASApplication, dataHash string) (string, int, error) {
	if w := fn(dataHash); w != "" {
		return w, 0, nil
	}
	return "", 1, nil
}

// publisherFn records what is published.
type publisherFn func(managed.ConnectionDetails)

func (fn publisherFn) PublishConnection(_ context.Context, _ resource.LocalConnectionSecretOwner, cd managed.ConnectionDetails) (bool, error) {
	fn(cd)
	return true, nil
}

func (fn publisherFn) UnpublishConnection(context.Context, resource.LocalConnectionSecretOwner, managed.ConnectionDetails) error {
	return nil
}

// at is the fixed now of the unit tests.
var at = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
