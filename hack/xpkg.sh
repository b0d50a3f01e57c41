#!/usr/bin/env bash
# Builds the Crossplane packages offline and prints their directory:
# - the provider package (package/, with a runtime image made without Docker
#   embedded; the binary reports VERSION),
# - the composition function's package (function/package, with its runtime
#   image embedded the same way; the binary is also left here for
#   `crossplane render`),
# - the Configuration package (package/configuration), which depends on both.
# packages.txt in that directory names each file and the reference it is
# published as. VERSION (default v0.1.0-dev) tags the provider and the
# Configuration; XPKG_OUT (default _output/xpkg) is where they go.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=progress.sh
source "$root/hack/progress.sh"
progress_plan 3
# Counted by whoever built the tools first (hack/local.sh), not again here.
tools=$(PROGRESS_DIR='' "$root/hack/crossplane-tools.sh")
out=${XPKG_OUT:-$root/_output/xpkg}
version=${VERSION:-v0.1.0-dev}
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

progress_build provider env CGO_ENABLED=0 GOOS=linux GOARCH=amd64 \
  go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$out/provider" "$root/cmd/provider"
progress_build "composition function" env CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOWORK=off \
  go -C "$root/function" build -trimpath -ldflags "-s -w" -o "$out/function-eventing-auth" .
progress_build "image builder" env CGO_ENABLED=0 GOWORK=off GOFLAGS="-mod=readonly -trimpath" go -C "$root/hack/crossplane" build -o "$bin/image" ./image

"$bin/image" --binary "$out/provider" --tag "ghcr.io/kyma-project/provider-eventing-auth:$version" --output "$out/provider-image.tar"
"$tools/crossplane" xpkg build --package-root="$root/package" --ignore='configuration/*' \
  --examples-root="$root/examples" --embed-runtime-image-tarball="$out/provider-image.tar" \
  --package-file="$out/provider-eventing-auth.xpkg" >&2
"$bin/image" --binary "$out/function-eventing-auth" \
  --path usr/local/bin/function --tag "ghcr.io/kyma-project/function-eventing-auth:$version" --output "$out/function-image.tar"
"$tools/crossplane" xpkg build --package-root="$root/function/package" \
  --embed-runtime-image-tarball="$out/function-image.tar" --package-file="$out/function-eventing-auth.xpkg" >&2
"$tools/crossplane" xpkg build --package-root="$root/package/configuration" --ignore='testdata/*' \
  --examples-root="$root/examples/configuration" --package-file="$out/configuration-eventing-auth.xpkg" >&2
{
  echo "provider-eventing-auth.xpkg ghcr.io/kyma-project/provider-eventing-auth:$version"
  echo "function-eventing-auth.xpkg ghcr.io/kyma-project/function-eventing-auth:$version"
  echo "configuration-eventing-auth.xpkg ghcr.io/kyma-project/configuration-eventing-auth:$version"
} >"$out/packages.txt.tmp"
mv "$out/packages.txt.tmp" "$out/packages.txt"
echo "$out"
