#!/usr/bin/env bash
# Builds the Crossplane packages offline into _output/xpkg: the provider package
# (package/, with a runtime image made without Docker embedded) and the
# Configuration package (package/configuration). Prints the directory.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools=$("$root/hack/crossplane-tools.sh")
out="$root/_output/xpkg"
version=${VERSION:-v0.1.0-dev}
mkdir -p "$out"

CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" -o "$out/provider" "$root/cmd/provider"
(cd "$root/hack/crossplane" && GOWORK=off GOFLAGS=-mod=readonly go run ./image \
  --binary "$out/provider" --tag "ghcr.io/kyma-project/provider-eventing-auth:$version" --output "$out/provider-image.tar")

"$tools/crossplane" xpkg build --package-root="$root/package" --ignore='configuration/*' \
  --examples-root="$root/examples" --embed-runtime-image-tarball="$out/provider-image.tar" \
  --package-file="$out/provider-eventing-auth.xpkg" >&2
"$tools/crossplane" xpkg build --package-root="$root/package/configuration" --ignore='testdata/*' \
  --examples-root="$root/examples/configuration" --package-file="$out/configuration-eventing-auth.xpkg" >&2
echo "$out"
