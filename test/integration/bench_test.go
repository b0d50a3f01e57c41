package integration

import (
	"runtime"
	"testing"
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
