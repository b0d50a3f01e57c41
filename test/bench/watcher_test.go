package bench

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
	"github.com/kyma-project/provider-eventing-auth/internal/runtimewatcher"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/skrwebhook"
	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// watcherOn puts the runtime-watcher's stand-in (the skr-webhook and the
// gateway) on the runtime API server and returns the provider's args that
// turn its listener on. Seeded runtimes keep their Secret in one namespace,
// named after the runtime; a runtime made by newRuntime in a namespace of its
// own.
func watcherOn(ctx context.Context, b *testing.B) (*skrwebhook.Forwarder, []string) {
	addr := freeAddr(b)
	fw, err := skrwebhook.Start("http://"+addr+"/v2/"+runtimewatcher.DefaultComponent+"/event", nil, func(namespace, name string) string {
		if namespace == steadyNamespace {
			return name
		}
		return namespace
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(fw.Close)
	if err := fw.Register(ctx, rt); err != nil {
		b.Fatal(err)
	}
	ca := filepath.Join(b.TempDir(), "watcher-client-ca.crt")
	if err := os.WriteFile(ca, fw.ClientCA, 0o600); err != nil {
		b.Fatal(err)
	}
	return fw, []string{"--runtime-watcher-address=" + addr, "--runtime-watcher-client-ca=" + ca}
}

// freeAddr is a loopback address nothing listens on, not handed out before.
func freeAddr(b *testing.B) string {
	addr, err := testnet.FreeAddr()
	if err != nil {
		b.Fatal(err)
	}
	return addr
}

// watcherRepairs breaks the Secret of 100 random runtimes by deleting it and
// of 100 others by editing it, as someone on those runtimes would, events
// delivered as the skr-webhook delivers them, and takes how long each took
// to be put back; then again beside a runtime whose Secret is rewritten 50
// times a second. It also takes what the repairs cost the runtimes' API
// server beyond the polls, and the IAS load meanwhile.
func watcherRepairs(ctx context.Context, b *testing.B, n int, ids []string, fw *skrwebhook.Forwarder, steadyIASRPS float64) {
	w := watchSteadySecrets(ctx, b)
	// The runtime API load of polls alone, to tell the repairs' apart.
	stats0 := sim.Stats()
	calls0, _ := iasCalls()
	phase := time.Now()
	base0 := secretCalls(ctx, b)
	time.Sleep(30 * time.Second)
	baseRate := (secretCalls(ctx, b) - base0) / 30

	pick := rand.Perm(n)
	at := func(from, to int) []string {
		out := make([]string, 0, to-from)
		for _, i := range pick[from:to] {
			out = append(out, ids[i])
		}
		return out
	}
	alone := repairRound(ctx, b, w, at(0, 100), at(100, 200), baseRate)
	fighter := ids[pick[400]]
	refused0 := fw.Refused.Load()
	fights0 := scrape(b).only("eventing_auth_runtime_secret_fights_total").GetCounter().GetValue()
	stop := fight(ctx, b, w, fighter)
	beside := repairRound(ctx, b, w, at(200, 300), at(300, 400), baseRate)
	fighterRepairs, writes := stop()
	calls, _ := iasCalls()

	benchfig.Figure("runtime_secret_repair_p99_s", benchfig.Percentile(alone.took, 0.99).Seconds(), 2)
	fmt.Printf("BENCH runtime_secret_repair_p50_s %.3f\n", benchfig.Percentile(alone.took, 0.5).Seconds())
	benchfig.Figure("runtime_secret_repairs_missed", float64(alone.missed+beside.missed), 0)
	benchfig.Figure("runtime_secret_repair_p99_s_beside_fight", benchfig.Percentile(beside.took, 0.99).Seconds(), 2)
	benchfig.Figure("runtime_secret_repair_p99_beside_fight_to_alone", benchfig.Percentile(beside.took, 0.99).Seconds()/
		benchfig.Percentile(alone.took, 0.99).Seconds(), 1.25)
	// Each repair: the event's read and the write (its echo, arriving while
	// the write is in flight, brings no read); the polls' reads, taken away
	// as a rate, add some noise.
	benchfig.Figure("runtime_api_calls_per_repair", alone.callsPerRepair, 3.5)
	benchfig.Figure("runtime_api_calls_per_repair_beside_fight", beside.callsPerRepair, 3.5)
	fmt.Printf("BENCH runtime_api_polls_per_s_%d %.1f\n", n, baseRate)
	// One event per repair (UpdatedExternalResource); nothing else. The
	// IASApplications' writes (secret checks falling due) are the polls'.
	keys, each, _ := benchfig.WritesBetween(alone.mgmtWrites, alone.mgmtWritesAfter, alone.repairs)
	repairWrites := 0.0
	for _, k := range keys {
		if !strings.HasPrefix(k, "iasapplications") {
			repairWrites += each[k]
		}
	}
	benchfig.Figure("management_api_writes_per_repair", repairWrites, 1)
	for _, k := range keys {
		fmt.Printf("  %s %.2f\n", k, each[k])
	}
	// No repair calls IAS: the tenant's load is the polls' (the listing that
	// serves them, the secret checks falling due) as at rest. The phase is
	// short, so one listing more or less moves its rate by a third: the
	// figure held is the calls the polls do not make.
	fmt.Printf("BENCH watcher_ias_rps_%d %.2f (at rest %.2f)\n", n, float64(calls-calls0)/time.Since(phase).Seconds(), steadyIASRPS)
	stats := sim.Stats()
	besides := 0
	for op := range stats {
		if op != operation.ListApplications && op != operation.ListAPISecrets {
			if d := stats.Count(op, 0) - stats0.Count(op, 0); d > 0 {
				besides += d
				fmt.Printf("  %s %d\n", op, d)
			}
		}
	}
	benchfig.Figure(fmt.Sprintf("watcher_ias_calls_besides_polls_%d", n), float64(besides), 0)
	fmt.Printf("BENCH fighter_writes %d\n", writes)
	fmt.Printf("BENCH fighter_events_refused %d\n", fw.Refused.Load()-refused0)
	// 20 s of a fight: three quick repairs, then waits of 1, 2, 4, 8 s.
	benchfig.Figure("fighter_repairs", float64(fighterRepairs), 10)
	benchfig.Figure("fights_told", scrape(b).only("eventing_auth_runtime_secret_fights_total").GetCounter().GetValue()-fights0, 1)
	warned := 0
	evs := &corev1.EventList{}
	if err := mgmt.List(ctx, evs, client.InNamespace(ns), client.MatchingFields{"involvedObject.name": fighter}); err == nil {
		for _, e := range evs.Items {
			if e.Reason == "SecretFought" && e.Type == corev1.EventTypeWarning {
				warned++
			}
		}
	}
	benchfig.Figure("fight_warnings", float64(warned), 1)
}

// round is what a repair round took.
type round struct {
	took           []time.Duration
	missed         int
	callsPerRepair float64
	// The management API server's writes before and after: a repair ends
	// where it began, Ready, so it writes no status, only its event.
	mgmtWrites, mgmtWritesAfter map[string]float64
	mgmtWritesPerRepair         float64
	repairs                     float64
}

// repairRound deletes the Secrets of deleted and edits those of edited, one
// every 50 ms, and waits until each is back as it was.
func repairRound(ctx context.Context, b *testing.B, w *steadySecrets, deleted, edited []string, baseRate float64) round {
	calls0, writes0 := secretCalls(ctx, b), apiWrites(ctx, b)
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	r := round{}
	for i := range max(len(deleted), len(edited)) {
		for _, id := range []string{nth(deleted, i), nth(edited, i)} {
			if id == "" {
				continue
			}
			back := w.expectBack(id)
			t := time.Now()
			var err error
			if id == nth(deleted, i) {
				err = rt.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: steadyNamespace, Name: id}})
			} else {
				err = rt.Patch(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: steadyNamespace, Name: id}},
					client.RawPatch(types.MergePatchType, []byte(`{"data":{"client_secret":"`+base64.StdEncoding.EncodeToString([]byte("edited by hand"))+`"}}`)))
			}
			if err != nil {
				b.Fatal(err)
			}
			wg.Go(func() {
				select {
				case at := <-back:
					mu.Lock()
					r.took = append(r.took, at.Sub(t))
					mu.Unlock()
				case <-time.After(30 * time.Second):
					mu.Lock()
					r.missed++
					mu.Unlock()
				}
			})
			time.Sleep(25 * time.Millisecond)
		}
	}
	wg.Wait()
	// Echoes that came after their write returned are read after the settle
	// delay.
	time.Sleep(2 * time.Second)
	elapsed := time.Since(start).Seconds()
	repairs := float64(len(deleted) + len(edited))
	r.callsPerRepair = (secretCalls(ctx, b) - calls0 - baseRate*elapsed) / repairs
	r.mgmtWrites, r.mgmtWritesPerRepair = writes0, 0
	r.mgmtWritesAfter = apiWrites(ctx, b)
	r.repairs = repairs
	return r
}

// nth is ids[i], "" past its end.
func nth(ids []string, i int) string {
	if i < len(ids) {
		return ids[i]
	}
	return ""
}

// fight rewrites the Secret of runtime id 50 times a second until stopped;
// stop tells how often the provider put it back meanwhile, and how many
// writes the fight made.
func fight(ctx context.Context, b *testing.B, w *steadySecrets, id string) (stop func() (repairs, writes int)) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	w.countRepairs(id)
	writes := 0
	wg.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				writes++
				v := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "fight %d", writes))
				if err := rt.Patch(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: steadyNamespace, Name: id}},
					client.RawPatch(types.MergePatchType, []byte(`{"data":{"client_secret":"`+v+`"}}`))); err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
	return func() (int, int) {
		close(done)
		wg.Wait()
		return w.repairsOf(id), writes
	}
}

// secretCalls is the runtime API server's reads and writes of Secrets that a
// RuntimeSecret makes (GET, PUT, POST), by every client; the bench's own
// breaking is DELETE and PATCH.
func secretCalls(ctx context.Context, b *testing.B) float64 {
	r, err := benchfig.APIRequests(ctx, runtimeKC)
	if err != nil {
		b.Fatal(err)
	}
	return r["secrets GET"] + r["secrets PUT"] + r["secrets POST"]
}

// steadySecrets watches the seeded runtimes' Secrets and tells when a broken
// one is back as it was.
type steadySecrets struct {
	mu      sync.Mutex
	data    map[string]string         // runtime ID -> DataHash of the Secret as seeded
	waiting map[string]chan time.Time // runtime ID -> told when back
	counted map[string]int            // runtime ID -> times back (a fight)
	last    map[string]string         // runtime ID -> DataHash last seen
}

func watchSteadySecrets(ctx context.Context, b *testing.B) *steadySecrets {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(runtimeKC)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	w := &steadySecrets{data: map[string]string{}, waiting: map[string]chan time.Time{}, counted: map[string]int{}, last: map[string]string{}}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "secrets", steadyNamespace, fields.Everything())
	inf := cache.NewSharedIndexInformer(lw, &corev1.Secret{}, 0, cache.Indexers{})
	seen := func(obj any) {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		now := time.Now()
		h := runtimev1alpha1.DataHash(s.Data)
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, known := w.data[s.Name]; !known {
			w.data[s.Name] = h
		}
		if h == w.data[s.Name] {
			if ch, ok := w.waiting[s.Name]; ok {
				ch <- now
				delete(w.waiting, s.Name)
			}
			if _, ok := w.counted[s.Name]; ok && w.last[s.Name] != h {
				w.counted[s.Name]++
			}
		}
		w.last[s.Name] = h
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, o any) { seen(o) },
		DeleteFunc: func(obj any) {
			if s, ok := obj.(*corev1.Secret); ok {
				w.mu.Lock()
				w.last[s.Name] = ""
				w.mu.Unlock()
			}
		}}); err != nil {
		b.Fatal(err)
	}
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("the watch on the runtimes' Secrets did not sync")
	}
	return w
}

// expectBack returns a channel told when runtime id's Secret is next as seeded.
func (w *steadySecrets) expectBack(id string) <-chan time.Time {
	ch := make(chan time.Time, 1)
	w.mu.Lock()
	w.waiting[id] = ch
	w.mu.Unlock()
	return ch
}

func (w *steadySecrets) countRepairs(id string) {
	w.mu.Lock()
	w.counted[id] = 0
	w.mu.Unlock()
}

func (w *steadySecrets) repairsOf(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counted[id]
}
