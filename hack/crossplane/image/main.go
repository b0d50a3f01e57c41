// Command image makes a runtime image (the provider's or the composition
// function's) without Docker: an empty base,
// one layer with the binary and the machine's CA bundle (IAS is reached
// over verified TLS), run as a non-root user in FIPS 140-only mode. It writes a tarball for
// `crossplane xpkg build --embed-runtime-image-tarball`.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	binary := flag.String("binary", "", "The binary, built for linux/<arch>: the provider's or the composition function's.")
	arch := flag.String("arch", "amd64", "The binary's architecture, as GOARCH names it; the image's platform is linux/<arch>.")
	path := flag.String("path", "usr/local/bin/provider", "Where the binary goes in the image; it is the entrypoint.")
	caBundle := flag.String("ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA certificates to put at /etc/ssl/certs/ca-certificates.crt.")
	tag := flag.String("tag", "ghcr.io/kyma-project/provider-eventing-auth:dev", "The image's name in the tarball.")
	out := flag.String("output", "", "Where to write the image tarball.")
	flag.Parse()
	if err := build(*binary, *arch, *path, *caBundle, *tag, *out); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func build(binary, arch, path, caBundle, tag, out string) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// A fixed time keeps the layer's digest the same for the same binary.
	epoch := time.Unix(0, 0)
	for _, dir := range []string{"etc/", "etc/ssl/", "etc/ssl/certs/", "usr/", "usr/local/", "usr/local/bin/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: epoch}); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		from, to string
		mode     int64
	}{{binary, path, 0o755}, {caBundle, "etc/ssl/certs/ca-certificates.crt", 0o644}} {
		b, err := os.ReadFile(f.from)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.to, Mode: f.mode, Size: int64(len(b)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = arch, "linux"
	cfg.Config.Entrypoint = []string{"/" + path}
	cfg.Config.User = "65532:65532"
	// The binary is built with Go's FIPS 140-3 module (hack/xpkg.sh);
	// fips140=only makes any algorithm outside it an error.
	cfg.Config.Env = []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "GODEBUG=fips140=only"}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, ref, img)
}
