package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
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
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
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
