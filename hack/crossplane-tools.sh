#!/usr/bin/env bash
# Builds the Crossplane CLI, crane and Crossplane core from the Go module proxy (no Docker, no release downloads) into a cache outside
# the repo and prints the directory. A second run with the same versions and
# go.sum files is a no-op.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=progress.sh
source "$here/progress.sh"
progress_plan 3
core_version=v2.4.2
# Crossplane's RBAC manager (core's "rbac start") serves its metrics on
# controller-runtime's default of :8080 and has no flag for it; a fixed port
# would keep the local stack from running beside anything else that uses it.
# The binary is built with controller-runtime's default set to "0" (no metrics
# server); core's own "start" sets its port by flag, so it is unaffected.
core_ldflags="-s -w -X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$core_version -X sigs.k8s.io/controller-runtime/pkg/metrics/server.DefaultBindAddress=0"
# Built with Go's FIPS 140-3 module, as the provider and the function are
# (hack/xpkg.sh): with the same setting their builds reuse the packages
# compiled here instead of compiling everything above crypto again.
fips=v1.0.0
sum=$( (cat "$here"/crossplane/go.{mod,sum} "$here"/crossplane-core/go.{mod,sum}; echo "$core_ldflags $fips") | sha256sum | cut -c1-12)
cache_root=${XPKG_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-eventing-auth/crossplane}
out="$cache_root/$sum"
bins=(crossplane crane crossplane-core)
# Crossplane's own CRDs (cluster/crds of the core module built below) come along,
# for running core against a local API server.

complete=true
for b in "${bins[@]}"; do [[ -x "$out/$b" ]] || complete=false; done
[[ -d "$out/crds" ]] || complete=false
if $complete; then
  progress_skip 3
  echo "$out"
  exit 0
fi

rm -rf "$out.tmp" && mkdir -p "$out.tmp"
export GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 GOTOOLCHAIN=local GOFIPS140=$fips
echo "building the Crossplane CLI, crane and Crossplane core $core_version from the Go module proxy (first time only)" >&2
progress_build_each "$out.tmp" crossplane:"Crossplane CLI" crane:crane -- \
  go -C "$here/crossplane" build -trimpath -ldflags "-s -w" -o "$out.tmp/" github.com/crossplane/cli/v2/cmd/crossplane github.com/google/go-containerregistry/cmd/crane
progress_build "Crossplane core" go -C "$here/crossplane-core" build -trimpath -ldflags "$core_ldflags" -o "$out.tmp/crossplane-core" github.com/crossplane/crossplane/v2/cmd/crossplane
# The CRDs of exactly the core version built above, from its module in the proxy.
core_dir=$(cd "$here/crossplane-core" && go mod download -json "github.com/crossplane/crossplane/v2@$core_version" |
  sed -n 's/.*"Dir": "\(.*\)",/\1/p')
[[ -d "$core_dir/cluster/crds" ]] || { echo "no cluster/crds in Crossplane core $core_version ($core_dir)" >&2; exit 1; }
mkdir -p "$out.tmp/crds"
cp "$core_dir"/cluster/crds/*.yaml "$out.tmp/crds/"
rm -rf "$out" && mv "$out.tmp" "$out"
echo "$out"
