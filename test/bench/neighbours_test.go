package bench

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// BenchmarkHostileNeighbours plays namespaces that try to stop the platform,
// all at once, beside 200 platform runtimes: the platform's IAS username with
// wrong passwords under four spellings of its tenant's URL; 20 users of their
// own at a tenant of 3,000 apps with long descriptions; 20 tenants and 20
// runtimes answering 429 with Retry-After of an hour; a resource naming the
// platform's ClusterProviderConfig. The provider is restarted (SIGKILL) once
// without them and once beside them, each time followed by 20 new platform
// runtimes, one every 2 s; the figures beside them are held against the run
// without.
func BenchmarkHostileNeighbours(b *testing.B) {
	args := []string{"--poll=" + benchPoll.String()}
	startProvider(b, args...)
	waitServing(b)
	for range b.N {
		ctx := context.Background()
		var platform []string
		for range 200 {
			platform = append(platform, nextID("platform"))
		}
		create(ctx, b, platform)
		waitAll(ctx, b, platform, 3*time.Minute, hasSecret)

		alone := restartAndServe(ctx, b, "alone", args)
		playNeighbours(ctx, b)
		neighboursAtWork(ctx, b)
		beside := restartAndServe(ctx, b, "beside-neighbours", args)
		neighboursAtWork(ctx, b)

		benchfig.Figure("neighbours_new_runtime_p99_s", beside.p99.Seconds(), 2)
		fmt.Printf("BENCH neighbours_alone_new_runtime_p99_s %.3f\n", alone.p99.Seconds())
		benchfig.Figure("neighbours_platform_failed_logons", float64(beside.failedLogons), 1)
		fmt.Printf("BENCH neighbours_alone_peak_rss_mib %.1f\n", float64(alone.peakKiB)/1024)
		benchfig.Figure("neighbours_peak_rss_growth_mib", float64(beside.peakKiB-alone.peakKiB)/1024, 64)
		benchfig.Figure("neighbours_workers_parked_tenant", beside.parked["tenant"], 2)
		benchfig.Figure("neighbours_workers_parked_runtime", beside.parked["runtime"], 2)
		notReady := 0
		for _, id := range append(platform, beside.created...) {
			if !hasSecret(ctx, id) || !ready(ctx, id) {
				notReady++
			}
		}
		benchfig.Figure("neighbours_platform_not_ready", float64(notReady), 0)
	}
}

// served is what a restart cost the platform.
type served struct {
	p99          time.Duration
	peakKiB      int64
	failedLogons int
	parked       map[string]float64
	created      []string
}

// restartAndServe kills and starts the provider, then makes 20 new platform
// runtimes one every 2 s, and takes the figures of that window.
func restartAndServe(ctx context.Context, b *testing.B, name string, args []string) served {
	logons := platformFailedLogons()
	restartProvider(b, name, args...)
	waitServing(b)
	parked := sampleFailingCalls(b)
	start := seq
	took := newRuntimesEvery(ctx, b, "platform-"+name, 20, 2*time.Second, 3*time.Minute)
	var created []string
	for i := start + 1; i <= seq; i++ {
		created = append(created, idOf("platform-"+name, i))
	}
	// The rest of a listing period: what the restart lists comes in.
	time.Sleep(30 * time.Second)
	// VmHWM: the most the process held since its start.
	peak := benchfig.UsageOf(provider.Process.Pid).PeakRSS
	s := served{p99: benchfig.Percentile(took, 0.99), peakKiB: peak, failedLogons: platformFailedLogons() - logons, parked: parked.end(), created: created}
	fmt.Printf("%s: new platform runtimes took %v; peak RSS %d MiB\n", name, took, peak>>10)
	return s
}

// platformFailedLogons is how many logons the platform's tenant rejected.
func platformFailedLogons() int {
	n := 0
	for _, codes := range sim.Stats() {
		n += codes[http.StatusUnauthorized]
	}
	return n
}

// ready tells whether the platform runtime id's RuntimeSecret is Ready.
func ready(ctx context.Context, id string) bool {
	r := &runtimev1alpha1.RuntimeSecret{}
	return mgmt.Get(ctx, key2(id), r) == nil && r.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
}

// playNeighbours makes the hostile namespaces and what they hold.
func playNeighbours(ctx context.Context, b *testing.B) {
	guesser, lister, thrower := neighbourNamespace(ctx, b, "tenant-b"), neighbourNamespace(ctx, b, "tenant-c"), neighbourNamespace(ctx, b, "tenant-d")

	// The platform's username with wrong passwords, the URL spelt four ways,
	// and a resource naming the platform's ClusterProviderConfig.
	host, port, _ := strings.Cut(strings.TrimPrefix(sim.URL, "http://"), ":")
	for i, url := range []string{sim.URL, "http://" + host + ":00" + port, strings.ToUpper(sim.URL) + "/", sim.URL + "/"} {
		namespacedConfig(ctx, b, guesser, fmt.Sprintf("guess-%d", i), url, "admin", fmt.Sprintf("guessed-%d", i))
		neighbourApp(ctx, b, guesser, fmt.Sprintf("guess-%d", i), v1alpha1.ProviderConfigKind, fmt.Sprintf("guess-%d", i))
	}
	neighbourApp(ctx, b, guesser, "platform-config", v1alpha1.ClusterProviderConfigKind, "default")

	// 20 users of its own at a tenant of 3,000 apps with long descriptions.
	large, err := iassim.New(iassim.Options{RateLimit: -1}).Serve("127.0.0.1:0", false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = large.Close() })
	long := strings.Repeat("d", 3000)
	for i := range 3000 {
		large.AddApp(iassim.App{Name: fmt.Sprintf("large-%d", i), Description: long})
	}
	for i := range 20 {
		user, password := fmt.Sprintf("user-%d", i), fmt.Sprintf("pw-%d", i)
		large.AddUser(user, password)
		namespacedConfig(ctx, b, lister, user, large.URL, user, password)
		neighbourApp(ctx, b, lister, fmt.Sprintf("large-%d", i), v1alpha1.ProviderConfigKind, user)
	}

	// 20 tenants and 20 runtimes that answer 429 with Retry-After of an hour.
	for i := range 20 {
		t, err := iassim.New(iassim.Options{RateLimit: -1}).Serve("127.0.0.1:0", false)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = t.Close() })
		t.InjectFault(iassim.Fault{Kind: iassim.Fault429, Rate: 1, RetryAfter: time.Hour})
		name := fmt.Sprintf("throttling-%d", i)
		namespacedConfig(ctx, b, thrower, name, t.URL, "admin", "admin-password")
		neighbourApp(ctx, b, thrower, name, v1alpha1.ProviderConfigKind, name)
	}
	throttling := testnet.Throttling(b)
	if err := mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: thrower},
		StringData: map[string]string{"client_id": "c", "client_secret": "s", "token_url": "https://t/oauth2/token", "certs_url": "https://t/oauth2/certs"}}); err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		id := fmt.Sprintf("throttling-rt-%d", i)
		kc, err := kubeconfigTrusting(id, strings.TrimPrefix(throttling.URL, "https://"), throttling.Certificate().Raw)
		if err != nil {
			b.Fatal(err)
		}
		if err := mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + id, Namespace: thrower}, Data: map[string][]byte{"config": kc}}); err != nil {
			b.Fatal(err)
		}
		if err := mgmt.Create(ctx, &runtimev1alpha1.RuntimeSecret{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: thrower},
			Spec: runtimev1alpha1.RuntimeSecretSpec{ForProvider: runtimev1alpha1.RuntimeSecretParameters{RuntimeID: id,
				CredentialsSecretRef: &xpv2.LocalSecretReference{Name: "creds"},
				Target:               runtimev1alpha1.TargetSecret{Namespace: id, Name: "eventing-webhook-auth"}}}}); err != nil {
			b.Fatal(err)
		}
	}
}

// kubeconfigTrusting is the runtime's kubeconfig pointing at server and
// trusting the DER certificate ca instead of the runtime's CA.
func kubeconfigTrusting(id, server string, ca []byte) ([]byte, error) {
	kc, err := kubeconfigNamed(id, server)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		return nil, err
	}
	for _, cl := range cfg.Clusters {
		cl.CertificateAuthorityData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca})
	}
	return clientcmd.Write(*cfg)
}

// neighboursAtWork waits until every neighbour's resource shows what it met:
// the guesses and the platform's config refused, the large tenant's apps
// made, the throttling tenants and runtimes named. So the figures are taken
// beside neighbours that act, not ones that never ran.
func neighboursAtWork(ctx context.Context, b *testing.B) {
	says := func(ns, want string, status corev1.ConditionStatus, kind xpv2.ConditionType, o func() conditionedObject) func(context.Context, string) bool {
		return func(ctx context.Context, name string) bool {
			obj := o()
			if mgmt.Get(ctx, key(ns, name), obj) != nil {
				return false
			}
			c := obj.GetCondition(kind)
			return c.Status == status && strings.Contains(c.Message, want)
		}
	}
	app := func() conditionedObject { return &iasv1alpha1.IASApplication{} }
	rs := func() conditionedObject { return &runtimev1alpha1.RuntimeSecret{} }
	var guesses, large, throttling, throttlingRT []string
	for i := range 4 {
		guesses = append(guesses, fmt.Sprintf("guess-%d", i))
	}
	for i := range 20 {
		large = append(large, fmt.Sprintf("large-%d", i))
		throttling = append(throttling, fmt.Sprintf("throttling-%d", i))
		throttlingRT = append(throttlingRT, fmt.Sprintf("throttling-rt-%d", i))
	}
	waitAll(ctx, b, guesses, 3*time.Minute, says("tenant-b", "may not log on as a platform user", corev1.ConditionFalse, xpv2.TypeSynced, app))
	waitAll(ctx, b, []string{"platform-config"}, 3*time.Minute, says("tenant-b", "does not admit managed resources of namespace tenant-b", corev1.ConditionFalse, xpv2.TypeSynced, app))
	waitAll(ctx, b, large, 3*time.Minute, says("tenant-c", "", corev1.ConditionTrue, xpv2.TypeReady, app))
	waitAll(ctx, b, throttling, 3*time.Minute, says("tenant-d", "HTTP 429 Too Many Requests", corev1.ConditionFalse, xpv2.TypeSynced, app))
	waitAll(ctx, b, throttlingRT, 3*time.Minute, says("tenant-d", "HTTP 429 Too Many Requests", corev1.ConditionFalse, xpv2.TypeSynced, rs))
}

// conditionedObject is a managed resource of either kind, to read.
type conditionedObject interface {
	client.Object
	conditioned
}

func key(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// neighbourNamespace makes a namespace of a neighbour.
func neighbourNamespace(ctx context.Context, b *testing.B, name string) string {
	if err := mgmt.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		b.Fatal(err)
	}
	return name
}

// namespacedConfig makes a ProviderConfig of namespace ns with credentials of its own.
func namespacedConfig(ctx context.Context, b *testing.B, ns, name, url, username, password string) {
	if err := mgmt.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		StringData: map[string]string{"username": username, "password": password, "url": url}}); err != nil {
		b.Fatal(err)
	}
	if err := mgmt.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.LocalCredentials{Source: xpv2.CredentialsSourceSecret, SecretRef: xpv2.LocalSecretReference{Name: name}}}}); err != nil {
		b.Fatal(err)
	}
}

// neighbourApp makes an IASApplication of namespace ns using the named config.
func neighbourApp(ctx context.Context, b *testing.B, ns, name, kind, config string) {
	a := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	a.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: name + "-ias"})
	a.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: kind, Name: config})
	if err := mgmt.Create(ctx, a); err != nil {
		b.Fatal(err)
	}
}
