#!/usr/bin/env bash
# Builds kube-apiserver, etcd, kubectl and kube-controller-manager from the Go module proxy (no Docker, no
# release downloads) into a cache outside the repo and prints the directory, for
# KUBEBUILDER_ASSETS. A second run with the same versions and go.sum is a no-op.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=progress.sh
source "$here/progress.sh"
progress_plan 4
mod="$here/envtest"
k8s_version=v1.35.8
etcd_version=v3.6.5
# Built with Go's FIPS 140-3 module, as the Crossplane tools, the provider and
# the function are: with one setting and one version of each dependency
# (hack/modalign), the packages compiled here serve their builds from the
# build cache.
fips=v1.0.0
sum=$( (cat "$mod/go.mod" "$mod/go.sum"; echo "$fips") | sha256sum | cut -c1-12)
cache_root=${ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-eventing-auth/envtest}
out="$cache_root/k8s-$k8s_version-etcd-$etcd_version-$sum"

if [[ -x "$out/kube-apiserver" && -x "$out/etcd" && -x "$out/kubectl" && -x "$out/kube-controller-manager" ]]; then
  progress_skip 4
  echo "$out"
  exit 0
fi

rm -rf "$out.tmp" && mkdir -p "$out.tmp"
# These flags stay fixed: any change recompiles the whole of Kubernetes.
export GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 GOTOOLCHAIN=local GOFIPS140=$fips
v=k8s.io/component-base/version
ldflags="-s -w -X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=35"
cd "$mod"
echo "building kube-apiserver $k8s_version, kubectl, kube-controller-manager and etcd $etcd_version from the Go module proxy (first time only)" >&2
# One go build for the four: their packages are scheduled together, and one
# binary links while the next compiles. go build -o DIR names etcd's binary
# "server", after its package.
progress_build_each "$out.tmp" kube-apiserver:kube-apiserver kubectl:kubectl kube-controller-manager:kube-controller-manager server:etcd -- \
  go build -trimpath -ldflags "$ldflags" -o "$out.tmp/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kube-controller-manager go.etcd.io/etcd/server/v3
mv "$out.tmp/server" "$out.tmp/etcd"
rm -rf "$out" && mv "$out.tmp" "$out"
echo "$out"
