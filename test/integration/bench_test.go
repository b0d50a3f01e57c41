package integration

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// The benchmarks of `make bench`: the provider at scale against the suite's
// control planes and simulators. Each iteration is a whole scenario; they print
// figures and assert nothing about time.

func BenchmarkIASApplicationsToReady(b *testing.B) {
	for range b.N {
		before := heapInUse()
		f := manyApplications(b, 200)
		b.ReportMetric(f.elapsed.Seconds(), "s/200-apps")
		b.ReportMetric(float64(f.requests)/float64(f.n), "ias-requests/app")
		b.ReportMetric(float64(f.throttled), "429s")
		b.ReportMetric(float64(heapInUse()-before)/float64(f.n)/1024, "heap-KiB/app")
	}
}

func BenchmarkRuntimeSecretsSmallClientCache(b *testing.B) {
	for range b.N {
		before := heapInUse()
		f := manyRuntimes(b, 100)
		b.ReportMetric(f.elapsed.Seconds(), "s/100-runtimes")
		b.ReportMetric(float64(f.built), "clients-built")
		b.ReportMetric(float64(f.peak), "peak-clients")
		b.ReportMetric(float64(heapInUse()-before)/float64(f.n)/1024, "heap-KiB/runtime")
	}
}

// heapInUse is the live heap after a collection; the provider runs in this
// process, so its growth over a scenario is what the scenario's resources cost
// (with the suite's own objects, an upper bound).
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// BenchmarkHostileTenant: a tenant answers three apps' lookups with pages that
// never end (fresh cursors; cursors of 3 MiB; the same 100 apps on every page)
// and another's GET with 512 MiB while 20 new runtimes' apps are
// made. It prints how far the process's peak memory rose above what it held
// before (bound 64 MiB) and how long the slowest of the 20 took to be Ready.
func BenchmarkHostileTenant(b *testing.B) {
	for range b.N {
		g := NewWithT(b)
		tn := newTenant(b, newNamespace(b), iassim.Options{})
		warm := tn.app("runtime-bench-warm")
		g.Expect(k8s.Create(ctx, warm)).To(Succeed())
		waitReady(b, warm)
		runtime.GC()
		before, err := procStatusKiB("VmRSS")
		g.Expect(err).NotTo(HaveOccurred())
		// Writing 5 to clear_refs resets the peak (VmHWM) to the current size.
		g.Expect(os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)).To(Succeed())

		start := time.Now()
		tn.sim.SetEndlessPages("name eq runtime-bench-endless", iassim.EndlessFresh)
		endless := tn.app("runtime-bench-endless")
		tn.sim.SetEndlessPages("name eq runtime-bench-huge-cursor", iassim.EndlessHugeCursor)
		hugeCursor := tn.app("runtime-bench-huge-cursor")
		tn.sim.SetEndlessPages("name eq runtime-bench-padded", iassim.EndlessSameApps)
		padded := tn.app("runtime-bench-padded")
		bigID := tn.sim.AddApp(iassim.App{Name: "runtime-bench-oversized"})
		tn.sim.SetOversized(bigID, 512<<20)
		big := tn.app("runtime-bench-oversized")
		meta.SetExternalName(big, bigID)
		hostile := []*iasv1alpha1.IASApplication{endless, hugeCursor, padded, big}
		apps := slices.Clone(hostile)
		for i := range 20 {
			apps = append(apps, tn.app(fmt.Sprintf("runtime-bench-beside-%d", i)))
		}
		for _, a := range apps {
			g.Expect(k8s.Create(ctx, a)).To(Succeed())
		}
		for _, a := range apps[len(hostile):] {
			waitReady(b, a)
		}
		slowest := time.Since(start)
		for _, a := range hostile {
			g.Eventually(func(g Gomega) {
				st, _ := condition(g, a, xpv2.TypeSynced)
				g.Expect(st).To(Equal(corev1.ConditionFalse))
			}, timeout, 200*time.Millisecond).Should(Succeed())
		}
		// A while longer: the two are tried again meanwhile.
		time.Sleep(10 * time.Second)
		peak, err := procStatusKiB("VmHWM")
		g.Expect(err).NotTo(HaveOccurred())
		benchfig.Figure("hostile_tenant_peak_rss_growth_mib", float64(peak-before)/1024, 64)
		benchfig.Figure("hostile_tenant_others_ready_s", slowest.Seconds(), 15)
	}
}

// procStatusKiB reads a KiB figure of /proc/self/status.
func procStatusKiB(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}
