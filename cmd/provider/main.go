// Command provider runs provider-eventing-auth: the Crossplane provider that gives
// every Kyma runtime an OIDC application in SAP Cloud Identity Services.
package main

import (
	"crypto/fips140"
	"flag"
	"fmt"
	"os"
	"runtime"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kyma-project/provider-eventing-auth/internal/gcheadroom"
	"github.com/kyma-project/provider-eventing-auth/internal/maxprocs"
	"github.com/kyma-project/provider-eventing-auth/internal/provider"
)

// gcHeadroom is the least garbage the collector lets build up between
// collections: with a small heap (a few hundred runtimes) the collector would
// otherwise run so often that it takes much of a bring-up's CPU; a larger
// floor costs memory and saves no more (docs/performance.md, what to request
// per 1,000 runtimes).
const gcHeadroom = 16 << 20

// gcPercent is the garbage allowed on top of a large live heap.
const gcPercent = 25

// version is the package version this binary was built for; hack/xpkg.sh sets it.
var version = "dev"

func main() {
	s := provider.DefaultSettings()
	s.Bind(flag.CommandLine)
	flag.Parse()
	if os.Getenv("GOGC") == "" {
		// Most of the heap is the informer cache, which lives as long as the
		// process and allocates little at rest: Go's default target of 100%
		// garbage on top of it would double the resident memory for little
		// GC work saved. The percentage counts only once the heap is large
		// (thousands of runtimes); a smaller one gets gcHeadroom of garbage
		// between collections.
		gcheadroom.Keep(gcPercent, gcHeadroom)
	}
	ctx := ctrl.SetupSignalHandler()
	if os.Getenv("GOMAXPROCS") == "" {
		// One thread while one core is more than the provider needs, Go's
		// default while it is busy (a start).
		go maxprocs.Defaults(runtime.GOMAXPROCS(0)).Run(ctx)
	}

	level := zapcore.InfoLevel
	if s.Debug {
		level = zapcore.DebugLevel
	}
	zl := zap.New(zap.Level(level))
	ctrl.SetLogger(zl)
	log := zl.WithName("provider-eventing-auth")

	cfg, err := ctrl.GetConfig()
	exitOn(err, "cannot get API server config")
	p, err := provider.New(cfg, s, provider.Process{Metrics: metrics.Registry, Log: log,
		SetupFailed: func(err error) { exitOn(err, "controller setup failed") }})
	exitOn(err, "cannot build the provider")
	log.Info("Starting provider", "version", version, "poll", s.Poll.String(), "pollRate", s.PollRate, "maxReconcileRate", s.MaxReconcileRate,
		"fips140Module", fips140.Version(), "fips140Enabled", fips140.Enabled(), "fips140Enforced", fips140.Enforced())
	exitOn(p.Manager.Start(ctx), "cannot start controller manager")
}

func exitOn(err error, msg string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "provider-eventing-auth: %s: %v\n", msg, err)
		os.Exit(1)
	}
}
