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
sum=$(sha256sum "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-12)
cache_root=${ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-eventing-auth/envtest}
out="$cache_root/k8s-$k8s_version-etcd-$etcd_version-$sum"

if [[ -x "$out/kube-apiserver" && -x "$out/etcd" && -x "$out/kubectl" && -x "$out/kube-controller-manager" ]]; then
  progress_skip 4
  echo "$out"
  exit 0
fi

mkdir -p "$out.tmp"
# These flags stay fixed: any change recompiles the whole of Kubernetes.
export GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 GOTOOLCHAIN=local
v=k8s.io/component-base/version
ldflags="-s -w -X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=35"
cd "$mod"
echo "building kube-apiserver $k8s_version, kubectl, kube-controller-manager and etcd $etcd_version from the Go module proxy (first time only)" >&2
progress_build kube-apiserver go build -trimpath -ldflags "$ldflags" -o "$out.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
progress_build kubectl go build -trimpath -ldflags "$ldflags" -o "$out.tmp/kubectl" k8s.io/kubernetes/cmd/kubectl
progress_build kube-controller-manager go build -trimpath -ldflags "$ldflags" -o "$out.tmp/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
progress_build etcd go build -trimpath -ldflags "-s -w" -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3
rm -rf "$out" && mv "$out.tmp" "$out"
echo "$out"
