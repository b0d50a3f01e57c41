package integration

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// What eventing-auth-manager sends at creation (kyma-project/eventing-auth-manager
// internal/ias/client.go: newIasApplication, with its --ias-global-account-id
// for every app, and newSecretRequest).
func operatorApp(name, globalAccount string) map[string]any {
	return map[string]any{
		"name":          name,
		"globalAccount": globalAccount,
		"branding":      map[string]any{"displayName": name},
		"schemas":       []any{"urn:sap:identity:application:schemas:extension:sci:1.0:Authentication"},
		"urn:sap:identity:application:schemas:extension:sci:1.0:Authentication": map[string]any{"ssoType": "openIdConnect"},
	}
}

var operatorSecret = map[string]any{"authorizationScopes": []any{"oAuth"}, "description": "eventing-auth-manager"}

// differences names the top-level fields in which got differs from want.
func differences(want, got map[string]any) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, bool) bool) {
		for k := range want {
			yield(k, true)
		}
		for k := range got {
			yield(k, true)
		}
	}))) {
		w, _ := json.Marshal(want[k])
		g, _ := json.Marshal(got[k])
		if string(w) != string(g) {
			out = append(out, k)
		}
	}
	return out
}

// testCreatedAsTheOperatorCreates: an app made from a Kyma CR gets the
// ProviderConfig's globalAccount, not the Kyma CR's label (the config does not
// ask for it), and the provider's create requests differ from
// eventing-auth-manager's only where docs/migration.md says: the app's
// description records its owner, and the api secret's description marks this
// provider's secrets.
func testCreatedAsTheOperatorCreates(t *testing.T) {
	t.Parallel()
	g := NewWithT(t)
	tn := newTenant(t, newNamespace(t), iassim.Options{})
	setGlobalAccount(t, tn, "ga-platform")

	a := tn.app("runtime-shaped")
	// As composed from a Kyma CR labelled with its own global account.
	meta.AddAnnotations(a, map[string]string{apis.AnnotationKymaGlobalAccount: "ga-of-the-kyma-cr"})
	g.Expect(k8s.Create(ctx, a)).To(Succeed())
	waitReady(t, a)
	app := expectPublished(g, tn, a)
	g.Expect(app.GlobalAccount).To(Equal("ga-platform"))

	var sentApp, sentSecret map[string]any
	g.Expect(json.Unmarshal(tn.sim.LastBody(operation.CreateApplication), &sentApp)).To(Succeed())
	g.Expect(json.Unmarshal(tn.sim.LastBody(operation.CreateAPISecret), &sentSecret)).To(Succeed())
	g.Expect(differences(operatorApp("runtime-shaped", "ga-platform"), sentApp)).To(Equal([]string{"description"}),
		"the app's create differs from eventing-auth-manager's: %v", sentApp)
	g.Expect(sentApp["description"]).To(Equal(ias.AppMarker + " for IASApplication " + tn.ns + "/runtime-shaped"))
	g.Expect(differences(operatorSecret, sentSecret)).To(Equal([]string{"description"}),
		"the api secret's create differs from eventing-auth-manager's: %v", sentSecret)
	g.Expect(sentSecret["description"]).To(Equal("eventing-auth"))

	// No global account configured: eventing-auth-manager sends it empty, and
	// so does the provider.
	setGlobalAccount(t, tn, "")
	none := tn.app("runtime-without-ga")
	g.Expect(k8s.Create(ctx, none)).To(Succeed())
	waitReady(t, none)
	g.Expect(json.Unmarshal(tn.sim.LastBody(operation.CreateApplication), &sentApp)).To(Succeed())
	g.Expect(differences(operatorApp("runtime-without-ga", ""), sentApp)).To(Equal([]string{"description"}),
		"the app's create without a global account differs from eventing-auth-manager's: %v", sentApp)
}

// setGlobalAccount sets the globalAccount of the tenant's ProviderConfig.
func setGlobalAccount(t *testing.T, tn *tenant, ga string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		pc := &v1alpha1.ProviderConfig{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: tn.ns, Name: tn.pcName}, pc)).To(Succeed())
		pc.Spec.GlobalAccount = ga
		g.Expect(k8s.Update(ctx, pc)).To(Succeed())
	}, timeout, 200*time.Millisecond).Should(Succeed())
}
