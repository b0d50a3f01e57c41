// Command ias-simulator serves a simulated SAP Cloud Identity Services tenant
// (Application Directory API) for local runs and benchmarks.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:8089", "address to listen on")
	useTLS := flag.Bool("tls", false, "serve HTTPS with a generated CA (written to --ca-file)")
	caFile := flag.String("ca-file", "ias-simulator-ca.pem", "where to write the CA with --tls")
	user := flag.String("username", "admin", "Basic auth username")
	pass := flag.String("password", "", "Basic auth password (default: env IAS_SIMULATOR_PASSWORD, else admin-password)")
	rps := flag.Float64("rate-limit", 50, "per-client requests per second before 429 (negative: off)")
	latency := flag.Duration("latency", 0, "latency added to every answer")
	empty404 := flag.Bool("empty-filter-404", false, "answer 404 to a filtered list with no match, as some tenants do")
	listLag := flag.Duration("list-lag", 0, "hide a new app from lists until it is this old, as IAS's lagging reads do")
	flag.Parse()

	if *pass == "" {
		*pass = os.Getenv("IAS_SIMULATOR_PASSWORD")
	}
	s := iassim.New(iassim.Options{Username: *user, Password: *pass, RateLimit: *rps, Latency: *latency, EmptyFilter404: *empty404, ListLag: *listLag})
	r, err := s.Serve(*addr, *useTLS)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ias-simulator:", err)
		os.Exit(1)
	}
	if *useTLS {
		if err := os.WriteFile(*caFile, r.CAPEM, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "ias-simulator:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("ias-simulator serving %s (stats: %s/_sim/stats)\n", r.URL, r.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	_ = r.Close()
}
