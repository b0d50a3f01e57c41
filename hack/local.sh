#!/usr/bin/env bash
# Builds what the local stack needs, one numbered line per binary with its time
# (hack/progress.sh), then runs it:
#   hack/local.sh run   the whole flow once (make local-run)
#   hack/local.sh up    the stack left running (make local-up)
#   hack/local.sh e2e   the end-to-end tests (make e2e)
# On a machine with empty Go caches the builds are most of the time; later runs
# find every binary but the stack's own in the caches.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
case $mode in
run | up | e2e) ;;
*)
  echo "usage: hack/local.sh run|up|e2e" >&2
  exit 2
  ;;
esac
PROGRESS_DIR=$(mktemp -d)
PROGRESS_EPOCH=$(date +%s)
# The stack runs on this machine: `run` and `up` package this machine's
# platform only; the end-to-end tests install the multi-platform packages.
if [[ $mode != e2e ]]; then
  XPKG_ARCHS=$(go env GOARCH)
  export XPKG_ARCHS
fi
read -r -a archs <<<"${XPKG_ARCHS:-amd64 arm64}"
# kube-apiserver, kubectl, kube-controller-manager, etcd; the Crossplane CLI,
# crane, Crossplane core; the image builder, the provider and the function per
# platform; the stack or its tests.
PROGRESS_TOTAL=$((9 + 2 * ${#archs[@]}))
export PROGRESS_DIR PROGRESS_EPOCH PROGRESS_TOTAL
bin=$PROGRESS_DIR
trap 'rm -rf "$bin"' EXIT
# shellcheck source=progress.sh
source "$root/hack/progress.sh"

assets=$("$root/hack/envtest-assets.sh")
tools=$("$root/hack/crossplane-tools.sh")
# The packages, built here once so that their compile shows; the stack builds
# them again at each version it publishes, from the warm build cache.
XPKG_OUT="$bin/xpkg" "$root/hack/xpkg.sh" >/dev/null
export KUBEBUILDER_ASSETS=$assets CROSSPLANE_TOOLS=$tools GOWORK=off
# The flags the provider is built with (hack/xpkg.sh), its FIPS module
# included: the packages the stack shares with it come from the build cache
# instead of being compiled again.
export CGO_ENABLED=0 GOFLAGS=-trimpath GOFIPS140=v1.0.0

case $mode in
run | up)
  progress_build "local stack" go -C "$root/cluster/local" build -o "$bin/local" .
  args=()
  [[ $mode == up ]] && args=(--keep-running)
  # The stack's own package builds are not counted.
  (unset PROGRESS_DIR && cd "$root/cluster/local" && "$bin/local" "${args[@]}")
  ;;
e2e)
  progress_build "end-to-end tests" go -C "$root/cluster/local" test -tags e2e -c -o "$bin/e2e.test" ./e2e
  # E2E_RUN picks tests by name, as go test's -run does.
  (unset PROGRESS_DIR && cd "$root/cluster/local/e2e" && "$bin/e2e.test" -test.count=1 -test.timeout=20m -test.v -test.run "${E2E_RUN:-.}")
  ;;
esac
