package provider

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestManagementConfigStripsManagedFields: the manager's client, built from
// the config the provider ships with, reads resources without their
// managedFields and with everything else.
func TestManagementConfigStripsManagedFields(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"ias.eventingauth.kyma-project.io/v1alpha1","kind":"IASApplication",` +
			`"metadata":{"name":"a","namespace":"kcp-system","managedFields":[{"manager":"provider","operation":"Update"}],"resourceVersion":"7"},` +
			`"status":{"atProvider":{"clientId":"c"}}}`))
	}))
	defer srv.Close()
	scheme := fakes.Scheme()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(iasv1alpha1.SchemeGroupVersion.WithKind("IASApplication"), meta.RESTScopeNamespace)
	c, err := client.New(managementConfig(&rest.Config{Host: srv.URL}, 10), client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	app := &iasv1alpha1.IASApplication{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "kcp-system", Name: "a"}, app); err != nil {
		t.Fatal(err)
	}
	if len(app.ManagedFields) != 0 {
		t.Errorf("managedFields %v, want none", app.ManagedFields)
	}
	if app.ResourceVersion != "7" || app.Status.AtProvider.ClientID != "c" {
		t.Errorf("read %+v %+v, want resourceVersion 7 and clientId c", app.ObjectMeta, app.Status.AtProvider)
	}
}

// TestManagementConfigSpeaksHTTP1: the manager's requests go over HTTP/1.1 to
// an API server that offers HTTP/2 too.
func TestManagementConfigSpeaksHTTP1(t *testing.T) {
	protos := make(chan string, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos <- r.Proto
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for name, cfg := range map[string]*rest.Config{
		"AsShipped": managementConfig(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, 10),
		// The server does speak HTTP/2: without the setting it is used.
		"ClientGoDefault": {Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}},
	} {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Get(srv.URL + "/version")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		want := "HTTP/1.1"
		if name == "ClientGoDefault" {
			want = "HTTP/2.0"
		}
		if got := <-protos; got != want {
			t.Errorf("%s: request in %s, want %s", name, got, want)
		}
	}
}
