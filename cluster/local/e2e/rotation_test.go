//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
)

// tokenSample is one look at the runtime's Secret: did IAS issue a token for
// the credentials it held?
type tokenSample struct {
	hint string // the client secret's first characters
	err  string // why no token was issued; empty when one was
}

// tokenSampler asks IAS for a token with whatever the runtime's Secret holds,
// every interval, as the runtime's eventing does with its credentials.
type tokenSampler struct {
	mu      sync.Mutex
	samples []tokenSample
	stop    context.CancelFunc
	done    chan struct{}
}

func sampleTokens(ctx context.Context, s *localstack.Stack, interval time.Duration) *tokenSampler {
	ctx, stop := context.WithCancel(ctx)
	ts := &tokenSampler{stop: stop, done: make(chan struct{})}
	c := s.SimClient()
	go func() {
		defer close(ts.done)
		for {
			if smp := sampleToken(ctx, s, c); ctx.Err() == nil {
				// A sample the stop cut short says nothing.
				ts.add(smp)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(interval):
			}
		}
	}()
	return ts
}

func (ts *tokenSampler) add(smp tokenSample) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.samples = append(ts.samples, smp)
}

// Stop ends the sampling and returns every sample taken.
func (ts *tokenSampler) Stop() []tokenSample {
	ts.stop()
	<-ts.done
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.samples
}

func sampleToken(ctx context.Context, s *localstack.Stack, c *http.Client) tokenSample {
	sec := &corev1.Secret{}
	if err := s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: "kyma-system", Name: "eventing-webhook-auth"}, sec); err != nil {
		if ctx.Err() != nil {
			return tokenSample{}
		}
		return tokenSample{err: "reading the runtime's Secret: " + err.Error()}
	}
	secret := string(sec.Data["client_secret"])
	smp := tokenSample{hint: secret[:min(4, len(secret))]}
	code, err := requestToken(ctx, c, string(sec.Data["token_url"]), string(sec.Data["client_id"]), secret)
	switch {
	case ctx.Err() != nil:
		return tokenSample{}
	case err != nil:
		smp.err = err.Error()
	case code != http.StatusOK:
		smp.err = "the token endpoint answered " + http.StatusText(code)
	}
	return smp
}

// requestToken sends the client credentials grant with Basic auth and returns
// the status code.
func requestToken(ctx context.Context, c *http.Client, tokenURL, clientID, secret string) (int, error) {
	body := url.Values{"grant_type": {"client_credentials"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, secret)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// rotateFromPlatform sets a secret rotation on the default
// ClusterProviderConfig, as a platform does once for every runtime, and follows
// the runtime made from a Kyma CR through its first rotation: the client ID
// and the app stay, the runtime gets the new secret while the old one still
// works, and IAS issues a token for the runtime's Secret at every moment.
func rotateFromPlatform(ctx context.Context, g Gomega, s *localstack.Stack, runtimeID string) {
	const timeout, interval = 2 * time.Minute, 250 * time.Millisecond
	onRuntime := &corev1.Secret{}
	g.Expect(s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: "kyma-system", Name: "eventing-webhook-auth"}, onRuntime)).To(Succeed())
	old := onRuntime.DeepCopy()
	appsBefore := s.Sim.AppsNamed(runtimeID)
	g.Expect(appsBefore).To(HaveLen(1))

	sampler := sampleTokens(ctx, s, 100*time.Millisecond)
	// A secret that never expired is replaced validFor - rotateBefore (a
	// minute) after it was published; its successor is valid for 30 minutes.
	cpc := &unstructured.Unstructured{}
	cpc.SetGroupVersionKind(schema.GroupVersionKind{Group: "eventingauth.kyma-project.io", Version: "v1alpha1", Kind: "ClusterProviderConfig"})
	cpc.SetName("default")
	g.Expect(s.Kube.Patch(ctx, cpc, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"secretRotation":{"validFor":"30m","rotateBefore":"29m"}}}`)))).To(Succeed())
	rotatedAt := time.Time{}
	g.Eventually(func(g Gomega) {
		g.Expect(s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: "kyma-system", Name: "eventing-webhook-auth"}, onRuntime)).To(Succeed())
		g.Expect(onRuntime.Data["client_secret"]).NotTo(Equal(old.Data["client_secret"]), "not rotated yet")
		rotatedAt = time.Now()
	}, timeout+time.Minute, interval).Should(Succeed())
	// The runtime holds the new secret; the old one still works in IAS.
	code, err := requestToken(ctx, s.SimClient(), string(old.Data["token_url"]), string(old.Data["client_id"]), string(old.Data["client_secret"]))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK), "the old secret stopped working before the runtime had its successor")
	time.Sleep(2 * time.Second)
	samples := sampler.Stop()

	g.Expect(onRuntime.Data["client_id"]).To(Equal(old.Data["client_id"]), "a rotation keeps the client ID")
	g.Expect(onRuntime.Data["token_url"]).To(Equal(old.Data["token_url"]))
	apps := s.Sim.AppsNamed(runtimeID)
	g.Expect(apps).To(HaveLen(1), "a rotation makes no new IAS app")
	g.Expect(apps[0].ID).To(Equal(appsBefore[0].ID))

	hints := map[string]int{}
	for _, smp := range samples {
		g.Expect(smp.err).To(BeEmpty(), "a moment without a working secret on the runtime (secret %s…)", smp.hint)
		hints[smp.hint]++
	}
	g.Expect(hints).To(HaveLen(2), "the samples saw the old and the new secret: %v", hints)

	app := &iasv1alpha1.IASApplication{}
	g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: runtimeID}, app)).To(Succeed())
	at := app.Status.AtProvider
	g.Expect(at.SecretValidTo).NotTo(BeNil(), "the new secret has no expiry")
	g.Expect(at.SecretValidTo.Time).To(BeTemporally("~", rotatedAt.Add(30*time.Minute), time.Minute))
	g.Expect(at.SecretRotatesAt).NotTo(BeNil())
	g.Expect(at.SecretRotatesAt.Time).To(BeTemporally("==", at.SecretValidTo.Add(-29*time.Minute)))
	g.Expect(at.Retiring).To(HaveLen(1), "the old secret is retiring, not gone")
}
