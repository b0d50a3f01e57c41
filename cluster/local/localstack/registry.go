package localstack

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// registry serves an OCI registry on loopback from memory. go-containerregistry,
// which Crossplane's package manager pulls with, speaks plain HTTP to loopback
// hosts, so no certificates are involved.
func (s *Stack) registry(_ context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	s.Registry = l.Addr().String()
	s.closers = append(s.closers, func() { _ = srv.Close() })
	return nil
}

// Mirrored is where the loopback registry holds a package published as ref:
// the same repository path under the registry's host.
func (s *Stack) Mirrored(ref string) string {
	_, path, _ := strings.Cut(ref, "/")
	return s.Registry + "/" + path
}

// Publish builds the packages at version with hack/xpkg.sh (the provider
// binary reports that version) and pushes them to the loopback registry under
// the references they are published as. The functions' packages are pushed
// once: a later version does not move their tags.
func (s *Stack) Publish(ctx context.Context, version string) error {
	out := filepath.Join(s.Work, "xpkg-"+version)
	build := exec.CommandContext(ctx, filepath.Join(s.o.Root, "hack", "xpkg.sh"))
	build.Env = append(os.Environ(), "VERSION="+version, "XPKG_OUT="+out)
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("cannot build the packages: %v\n%s", err, b)
	}
	f, err := os.Open(filepath.Join(out, "packages.txt"))
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // Read only.
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		files, ref, ok := strings.Cut(lines.Text(), " ")
		if !ok {
			return fmt.Errorf("packages.txt: cannot read %q", lines.Text())
		}
		if s.pushed[ref] {
			continue
		}
		var paths []string
		for _, f := range strings.Split(files, ",") {
			paths = append(paths, filepath.Join(out, f))
		}
		// As a user publishes them: one package file per platform becomes an
		// index of them.
		push := exec.CommandContext(ctx, filepath.Join(s.o.Tools, "crossplane"), "xpkg", "push", "-f", strings.Join(paths, ","), s.Mirrored(ref))
		if b, err := push.CombinedOutput(); err != nil {
			return fmt.Errorf("cannot push %s: %v\n%s", ref, err, b)
		}
		s.pushed[ref] = true
	}
	return lines.Err()
}

// mirror tells Crossplane to pull the packages of the registries the
// Configuration names from the loopback registry instead: what an offline
// landscape does with its own mirror.
func (s *Stack) mirror(ctx context.Context) error {
	return s.apply(ctx, fmt.Sprintf(`
apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata:
  name: loopback-mirror
spec:
  matchImages:
  - prefix: ghcr.io/
  - prefix: xpkg.crossplane.io/
  rewriteImage:
    prefix: %s/
`, s.Registry))
}
