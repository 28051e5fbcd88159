#!/usr/bin/env bash
# Every test, in the order a failure is cheapest to read: types, packaging, the module's own checks,
# then the suites on real servers. Installs what is missing first. Any failure fails the run.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash tools/bootstrap.sh || exit 1

bin=node_modules/.bin
failed=()
step() { # step <name> <command…>
  local name=$1; shift
  printf '\n=== %s\n' "$name"
  if "$@"; then printf -- '--- ok: %s\n' "$name"; else printf -- '--- FAILED: %s\n' "$name"; failed+=("$name"); fi
}

step "wire spec: docs/WIRE.md, tests/vectors/wire.json and native/src/spec.rs are what lib/wire generates" "$bin/bun" tools/gen_wire.ts --check
step "tsc --noEmit" "$bin/tsc" --noEmit -p .
step "deno check" "$bin/deno" check --quiet mod.ts client.ts cli/main.ts
step "deno doc --lint (every export documented, no private type in a public one)" "$bin/deno" doc --lint mod.ts client.ts
step "doc examples run (deno test --doc: keyspace, wire)" env -u RUST_BACKTRACE "$bin/deno" test --doc --quiet --allow-all mod.ts lib/keyspace/ lib/wire/
step "doc examples type-check (deno check --doc: client)" env -u RUST_BACKTRACE "$bin/deno" check --doc --quiet client.ts lib/client/
step "deno publish --dry-run" "$bin/deno" publish --dry-run --allow-dirty --quiet
if [ -f native/Cargo.toml ]; then
  step "cargo fmt --check" cargo fmt --manifest-path native/Cargo.toml --check
  step "cargo clippy" cargo clippy --quiet --release --manifest-path native/Cargo.toml --all-targets -- -D warnings
  step "cargo test (module unit tests)" cargo test --quiet --release --manifest-path native/Cargo.toml
fi

log=$(mktemp)
printf '\n=== bun test\n'
"$bin/bun" test --timeout 180000 tests/ 2>&1 | tee "$log"
bun_status=${PIPESTATUS[0]}
[ "$bun_status" -eq 0 ] || failed+=("bun test")
passed=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
bun_failed=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
rm -f "$log"

# The same keyspace and behaviour files under Deno: tests/deno.json maps `bun:test` onto Deno.test
# (tests/_deno/shim.ts). Standalone only (the cluster combos stay with Bun). `--no-check`: tsc
# checks these files above; the shim itself is checked here.
deno_test=(env -u RUST_BACKTRACE EMQ_TOPOLOGIES=standalone "$bin/deno" test --quiet --no-check --config tests/deno.json
  --preload tests/_preload.ts --allow-read --allow-write --allow-env --allow-sys --allow-ffi --allow-run
  --allow-net=127.0.0.1 tests/_deno/shim_check.ts tests/keyspace/ tests/client/behaviour.test.ts)
step "deno check (the bun:test shim)" env -u RUST_BACKTRACE "$bin/deno" check --quiet --config tests/deno.json tests/_deno/
step "deno test (keyspace, client behaviour standalone; same files as bun test)" "${deno_test[@]}"

if [ -f cli/demo.ts ]; then
  step "demo under Bun (short)" ./emq demo --seconds 2
  step "demo under Deno (short)" env EMQ_RUNTIME=deno ./emq demo --seconds 2
fi

printf '\n'
if [ ${#failed[@]} -gt 0 ]; then
  printf 'failed steps: %s\n' "${failed[*]}"
  printf 'tests: %s passed, %s failed\n' "$passed" "$((bun_failed > 0 ? bun_failed : 1))"
  exit 1
fi
printf 'tests: %s passed, %s failed\n' "$passed" "$bun_failed"
