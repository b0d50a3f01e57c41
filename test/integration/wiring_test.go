package integration

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// testShippedWiring: the suite's provider is built as the binary's (package
// provider): its client does not send a status write that changes nothing,
// and its cache holds objects without managedFields. A harness with a manager
// of its own fails here.
func testShippedWiring(t *testing.T) {
	g := NewWithT(t)
	_, rs, _ := readyRuntimeSecret(t, rtEnv, rt, "rt-wiring")

	// The cache the controllers read: managedFields stripped, as the API
	// server holds them.
	cached := &runtimev1alpha1.RuntimeSecret{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rs), cached)).To(Succeed())
		g.Expect(cached.Status.AtProvider.DataHash).NotTo(BeEmpty())
	}, timeout, 100*time.Millisecond).Should(Succeed())
	g.Expect(cached.ManagedFields).To(BeEmpty(), "the cache holds managedFields: not the shipped cache transform")
	scheme := fakes.Scheme()
	uncached, err := client.New(mgmtConfig, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	fromServer := &runtimev1alpha1.RuntimeSecret{}
	g.Expect(uncached.Get(ctx, client.ObjectKeyFromObject(rs), fromServer)).To(Succeed())
	g.Expect(fromServer.ManagedFields).NotTo(BeEmpty(), "the API server keeps managedFields")

	// An unchanged status written through the controllers' client: no request.
	statusPuts := func() float64 {
		w, err := benchfig.APIRequestsAt(ctx, mgmtConfig)
		g.Expect(err).NotTo(HaveOccurred())
		return w["runtimesecrets/status PUT"]
	}
	before := statusPuts()
	for range 5 {
		g.Expect(k8s.Status().Update(ctx, cached.DeepCopy())).To(Succeed())
	}
	g.Expect(statusPuts()).To(Equal(before), "an unchanged status reached the API server: not the shipped client")
}
