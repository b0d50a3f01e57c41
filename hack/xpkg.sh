#!/usr/bin/env bash
# Builds the Crossplane packages offline and prints their directory:
# - the provider package (package/, with a runtime image made without Docker
#   embedded; the binary reports VERSION),
# - the Configuration package (package/configuration),
# - the composition functions' packages, from their modules' package/ directories
#   (hack/functions.txt), so that a registry on loopback can serve every
#   dependency of the Configuration.
# packages.txt in that directory names each file and the reference it is
# published as. VERSION (default v0.1.0-dev) tags the provider and the
# Configuration; XPKG_OUT (default _output/xpkg) is where they go.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
tools=$("$root/hack/crossplane-tools.sh")
out=${XPKG_OUT:-$root/_output/xpkg}
version=${VERSION:-v0.1.0-dev}
mkdir -p "$out"

CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$out/provider" "$root/cmd/provider"
(cd "$root/hack/crossplane" && GOWORK=off GOFLAGS=-mod=readonly go run ./image \
  --binary "$out/provider" --tag "ghcr.io/kyma-project/provider-eventing-auth:$version" --output "$out/provider-image.tar")

"$tools/crossplane" xpkg build --package-root="$root/package" --ignore='configuration/*' \
  --examples-root="$root/examples" --embed-runtime-image-tarball="$out/provider-image.tar" \
  --package-file="$out/provider-eventing-auth.xpkg" >&2
"$tools/crossplane" xpkg build --package-root="$root/package/configuration" --ignore='testdata/*' \
  --examples-root="$root/examples/configuration" --package-file="$out/configuration-eventing-auth.xpkg" >&2
{
  echo "provider-eventing-auth.xpkg ghcr.io/kyma-project/provider-eventing-auth:$version"
  echo "configuration-eventing-auth.xpkg ghcr.io/kyma-project/configuration-eventing-auth:$version"
} >"$out/packages.txt.tmp"

# The functions' packages carry no runtime image: where they run is the
# package runtime's business (local processes here).
while read -r f; do
  dir=$(cd "$root/hack/crossplane" && GOWORK=off go mod download -json "$f" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  name=$(basename "${f%@*}")
  "$tools/crossplane" xpkg build --package-root="$dir/package" --package-file="$out/$name.xpkg" >&2
  echo "$name.xpkg xpkg.crossplane.io/crossplane-contrib/$name:${f#*@}" >>"$out/packages.txt.tmp"
done < <(grep -v '^#' "$root/hack/functions.txt")
mv "$out/packages.txt.tmp" "$out/packages.txt"
echo "$out"
