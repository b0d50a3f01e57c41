#!/usr/bin/env bash
# Builds the Crossplane packages offline and prints their directory:
# - the provider package (package/, with a runtime image made without Docker
#   embedded; the binary reports VERSION), one per platform,
# - the composition function's package (function/package, with its runtime
#   image embedded the same way), one per platform; the binary for this
#   machine is also left here for `crossplane render`,
# - the Configuration package (package/configuration), which depends on both.
# packages.txt in that directory names, per line, the files of one package
# (comma-separated, one per platform: `crossplane xpkg push -f` makes them one
# multi-platform index) and the reference it is published as.
# VERSION (default v0.1.0-dev) tags the provider and the Configuration;
# XPKG_OUT (default _output/xpkg) is where they go; XPKG_ARCHS (default
# "amd64 arm64") the linux architectures built.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=progress.sh
source "$root/hack/progress.sh"
read -r -a archs <<<"${XPKG_ARCHS:-amd64 arm64}"
progress_plan $((2 * ${#archs[@]} + 1))
# Counted by whoever built the tools first (hack/local.sh), not again here.
tools=$(PROGRESS_DIR='' "$root/hack/crossplane-tools.sh")
out=${XPKG_OUT:-$root/_output/xpkg}
version=${VERSION:-v0.1.0-dev}
host_arch=$(go env GOARCH)
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

progress_build "image builder" env CGO_ENABLED=0 GOWORK=off GOFLAGS="-mod=readonly -trimpath" go -C "$root/hack/crossplane" build -o "$bin/image" ./image
providers=() functions=()
for arch in "${archs[@]}"; do
  # Go's FIPS 140-3 module v1.0.0, as eventing-auth-manager's image; the
  # images run both binaries with GODEBUG=fips140=only.
  progress_build "provider linux/$arch" env CGO_ENABLED=0 GOOS=linux GOARCH="$arch" GOFIPS140=v1.0.0 \
    go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$out/provider-$arch" "$root/cmd/provider"
  progress_build "composition function linux/$arch" env CGO_ENABLED=0 GOOS=linux GOARCH="$arch" GOFIPS140=v1.0.0 GOWORK=off \
    go -C "$root/function" build -trimpath -ldflags "-s -w" -o "$out/function-eventing-auth-$arch" .

  "$bin/image" --binary "$out/provider-$arch" --arch "$arch" --tag "ghcr.io/kyma-project/provider-eventing-auth:$version" --output "$bin/provider-image.tar"
  "$tools/crossplane" xpkg build --package-root="$root/package" --ignore='configuration/*' \
    --examples-root="$root/examples" --embed-runtime-image-tarball="$bin/provider-image.tar" \
    --package-file="$out/provider-eventing-auth-$arch.xpkg" >&2
  "$bin/image" --binary "$out/function-eventing-auth-$arch" --arch "$arch" \
    --path usr/local/bin/function --tag "ghcr.io/kyma-project/function-eventing-auth:$version" --output "$bin/function-image.tar"
  "$tools/crossplane" xpkg build --package-root="$root/function/package" \
    --embed-runtime-image-tarball="$bin/function-image.tar" --package-file="$out/function-eventing-auth-$arch.xpkg" >&2
  providers+=("provider-eventing-auth-$arch.xpkg") functions+=("function-eventing-auth-$arch.xpkg")
  if [[ $arch == "$host_arch" ]]; then
    cp "$out/provider-$arch" "$out/provider"
    cp "$out/function-eventing-auth-$arch" "$out/function-eventing-auth"
  fi
done
"$tools/crossplane" xpkg build --package-root="$root/package/configuration" --ignore='testdata/*' \
  --examples-root="$root/examples/configuration" --package-file="$out/configuration-eventing-auth.xpkg" >&2
join() { local IFS=,; echo "$*"; }
{
  echo "$(join "${providers[@]}") ghcr.io/kyma-project/provider-eventing-auth:$version"
  echo "$(join "${functions[@]}") ghcr.io/kyma-project/function-eventing-auth:$version"
  echo "configuration-eventing-auth.xpkg ghcr.io/kyma-project/configuration-eventing-auth:$version"
} >"$out/packages.txt.tmp"
mv "$out/packages.txt.tmp" "$out/packages.txt"
echo "$out"
