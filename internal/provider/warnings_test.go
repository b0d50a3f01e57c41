package provider

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestWarningsLoggedOnce: the API server's warning at every finalizer write
// is logged once by the provider's client, not once per write.
func TestWarningsLoggedOnce(t *testing.T) {
	const warning = `metadata.finalizers: "finalizer.managedresource.crossplane.io": prefer a domain-qualified finalizer name`
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Warning", `299 - "`+strings.ReplaceAll(warning, `"`, `\"`)+`"`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","namespace":"ns"}}`))
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	scheme := fakes.Scheme()
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{corev1.SchemeGroupVersion})
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Secret"), meta.RESTScopeNamespace)
	c, err := client.New(managementConfig(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, 10),
		client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	ctx := ctrllog.IntoContext(context.Background(), funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{}))
	for range 5 {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "s"}, &corev1.Secret{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "domain-qualified") {
		t.Errorf("logged %q, want the warning once", lines)
	}
}
