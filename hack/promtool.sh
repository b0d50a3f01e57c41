#!/usr/bin/env bash
# Builds promtool, pinned in hack/promtool/go.mod, from the Go module proxy into
# a cache outside the repo and prints its path. A second run with the same
# go.mod and go.sum is a no-op.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=progress.sh
source "$here/progress.sh"
progress_plan 1
sum=$(cat "$here"/promtool/go.{mod,sum} | sha256sum | cut -c1-12)
cache_root=${PROMTOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-eventing-auth/promtool}
out="$cache_root/$sum/promtool"
if [[ -x $out ]]; then
  echo "$out"
  exit 0
fi
mkdir -p "$(dirname "$out")"
echo "building promtool from the Go module proxy (first time only)" >&2
export GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 GOTOOLCHAIN=local
progress_build promtool go -C "$here/promtool" build -trimpath -ldflags "-s -w" -o "$out.tmp" github.com/prometheus/prometheus/cmd/promtool
mv "$out.tmp" "$out"
echo "$out"
