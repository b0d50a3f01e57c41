# Sourced by the build scripts. progress_build NAME COMMAND... runs a build and
# prints one line for it on stderr: its number, its name, how long it took and
# how long the whole command has taken so far, with the modules it downloaded
# counted rather than listed ("go: downloading" is one line per module, hundreds
# on a machine with an empty module cache). Other output of the build follows
# the line; on failure all of it does.
#
# progress_build_each DIR FILE:NAME... -- COMMAND... runs one build that
# writes several binaries into DIR (go build -o DIR/ pkg...), so that the go
# command schedules their packages together and links one binary while it
# compiles the next; it prints the line for each binary, in the order given,
# once its file is there.
#
# A make target that runs several scripts numbers the binaries across them: it
# exports PROGRESS_TOTAL (how many it builds), PROGRESS_DIR (a directory for the
# count) and PROGRESS_EPOCH (when it began, in Unix seconds). A script run alone
# numbers its own, out of the total it gives progress_plan.

_progress_n=0
_progress_total='?'
_progress_epoch=${PROGRESS_EPOCH:-$(date +%s)}

# progress_plan TOTAL: how many binaries this script builds, when run alone.
progress_plan() { _progress_total=$1; }

# progress_next N: the number of the binary N places on, counted.
progress_next() {
  if [[ -n ${PROGRESS_DIR:-} ]]; then
    _progress_n=$(($(cat "$PROGRESS_DIR/count" 2>/dev/null || echo 0) + $1))
    echo "$_progress_n" >"$PROGRESS_DIR/count"
    _progress_total=${PROGRESS_TOTAL:-?}
  else
    _progress_n=$((_progress_n + $1))
  fi
}

# progress_skip N: N binaries were in the cache already.
progress_skip() { progress_next "$1"; }

_progress_clock() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# _progress_line NAME RC SECONDS DOWNLOADS: one binary's line.
_progress_line() {
  local name=$1 rc=$2 took=$3 downloads=$4 all
  all=$(($(date +%s) - _progress_epoch))
  printf '[%s/%s] %s ...' "$_progress_n" "$_progress_total" "$name" >&2
  if ((rc == 0)); then
    printf ' %s (%s in all)' "$(_progress_clock "$took")" "$(_progress_clock "$all")" >&2
  else
    printf ' failed after %s' "$(_progress_clock "$took")" >&2
  fi
  if ((downloads > 0)); then
    printf ', %d modules downloaded' "$downloads" >&2
  fi
  printf '\n' >&2
}

progress_build_each() {
  local dir=$1 log t rc=0 pid ended=false downloads counted=0 f
  local pending=()
  shift
  while [[ $1 != -- ]]; do
    pending+=("$1")
    shift
  done
  shift
  log=$(mktemp)
  t=$(date +%s)
  "$@" 2>"$log" &
  pid=$!
  while ((${#pending[@]})) && ! $ended; do
    kill -0 "$pid" 2>/dev/null || ended=true
    # In the order given, so that a small binary linked early (crane) does
    # not take the line, and the time, of the large one it shares packages
    # with.
    while ((${#pending[@]})) && [[ -e $dir/${pending[0]%%:*} ]]; do
      f=${pending[0]}
      pending=("${pending[@]:1}")
      progress_next 1
      # The go command downloads every module before it compiles: the first
      # line counts them all.
      downloads=$(grep -c '^go: downloading' "$log" || true)
      _progress_line "${f#*:}" 0 $(($(date +%s) - t)) $((downloads - counted))
      counted=$downloads
      t=$(date +%s)
    done
    $ended || sleep 1
  done
  wait "$pid" || rc=$?
  for f in "${pending[@]}"; do
    progress_next 1
    _progress_line "${f#*:}" 1 $(($(date +%s) - t)) 0
  done
  grep -v '^go: downloading' "$log" >&2 || true
  rm -f "$log"
  return "$rc"
}

progress_build() {
  local name=$1 log t0 rc=0
  shift
  progress_next 1
  log=$(mktemp)
  t0=$(date +%s)
  "$@" 2>"$log" || rc=$?
  _progress_line "$name" "$rc" $(($(date +%s) - t0)) "$(grep -c '^go: downloading' "$log" || true)"
  grep -v '^go: downloading' "$log" >&2 || true
  rm -f "$log"
  return "$rc"
}
