#!/usr/bin/env bash
# The whole test command N times back to back (default 3) while one core is kept busy, as on a
# shared CI machine; each run's log in .tmp/loaded/run-<i>.log and a summary line per run (time,
# counts, failed steps and tests). Exit 1 if any run failed. Usage: bash tools/loaded_runs.sh [N]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
runs=${1:-3}
mkdir -p .tmp/loaded
# One busy core: a shell loop (no stress-ng needed), stopped however this script ends.
sh -c 'while :; do :; done' &
busy=$!
trap 'kill "$busy" 2>/dev/null' EXIT
status=0
for i in $(seq 1 "$runs"); do
  log=.tmp/loaded/run-$i.log
  start=$(date +%s)
  ./emq test >"$log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || status=1
  summary=$(grep -E '^tests: ' "$log" | tail -1)
  steps=$(grep -E '^failed steps: ' "$log" | tail -1)
  printf 'run %d: exit %d after %ds; %s %s\n' "$i" "$rc" "$(($(date +%s) - start))" "${summary:-no summary}" "$steps"
  grep -E '^\(fail\)' "$log" | sed 's/^/    /'
done
exit "$status"
