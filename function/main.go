// Command function-eventing-auth is the composition function of the
// EventingAuth Composition: per EventingAuth it composes the IASApplication and
// the RuntimeSecret, reports their readiness and the app's identity on the
// EventingAuth, and lets Crossplane core leave a Ready EventingAuth alone until
// its answer's TTL (--ttl) runs out.
package main

import (
	"crypto/fips140"
	"flag"
	"fmt"
	"os"

	"github.com/crossplane/function-sdk-go"
)

func main() {
	address := flag.String("address", ":9443", "Address at which to listen for gRPC connections from Crossplane.")
	network := flag.String("network", "tcp", "Network on which to listen for gRPC connections.")
	certs := flag.String("tls-certs-dir", os.Getenv("TLS_SERVER_CERTS_DIR"), "Directory with the mTLS certificates (tls.crt, tls.key, ca.crt); default $TLS_SERVER_CERTS_DIR.")
	insecure := flag.Bool("insecure", false, "Serve without mTLS, for `crossplane render`.")
	metrics := flag.String("metrics-address", "", "Address to serve Prometheus metrics at; empty serves none.")
	debug := flag.Bool("debug", false, "Log every request.")
	ttl := flag.Duration("ttl", DefaultTTL, "How long Crossplane core may keep an answer before composing a Ready EventingAuth again; changes are composed at once regardless.")
	flag.Parse()

	log, err := function.NewLogger(*debug)
	if err != nil {
		fmt.Fprintln(os.Stderr, "function-eventing-auth:", err)
		os.Exit(1)
	}
	log.Info("Starting function-eventing-auth", "fips140Module", fips140.Version(), "fips140Enabled", fips140.Enabled(), "fips140Enforced", fips140.Enforced())
	err = function.Serve(&Function{log: log, ttl: *ttl},
		function.Listen(*network, *address),
		function.MTLSCertificates(*certs),
		function.Insecure(*insecure),
		function.WithMetricsServer(*metrics))
	if err != nil {
		fmt.Fprintln(os.Stderr, "function-eventing-auth:", err)
		os.Exit(1)
	}
}
