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

step "wire spec: docs/WIRE.md, tests/vectors/wire.json and native/src/{spec,refusal,table}.rs are what lib/wire generates" "$bin/bun" tools/gen_wire.ts --check
step "deno fmt --check (the TypeScript tree, deno.json's fmt: width 160)" env -u RUST_BACKTRACE "$bin/deno" fmt --check --quiet
step "tsc --noEmit" "$bin/tsc" --noEmit -p .
step "deno check" "$bin/deno" check --quiet mod.ts client.ts ui.ts cli.ts bullmq.ts dev/main.ts
step "deno doc --lint (every export documented, no private type in a public one)" "$bin/deno" doc --lint mod.ts client.ts ui.ts cli.ts bullmq.ts
step "doc examples run (deno test --doc: keyspace, wire)" env -u RUST_BACKTRACE "$bin/deno" test --doc --quiet --allow-all mod.ts lib/keyspace/ lib/wire/
step "doc examples type-check (deno check --doc: client, ui, cli)" env -u RUST_BACKTRACE "$bin/deno" check --doc --quiet client.ts lib/client/ ui.ts lib/ui/ cli.ts
step "deno publish --dry-run" "$bin/deno" publish --dry-run --allow-dirty --quiet
# The release as it would run (tools/release.ts): every package from deno.json's version — the JSR
# stage and `npm publish --dry-run` of the npm package and its platform package (the built module).
step "release dry run (tools/release.ts: deno and npm publish --dry-run of every package)" "$bin/bun" tools/release.ts
if [ -f native/Cargo.toml ]; then
  step "cargo fmt --check" cargo fmt --manifest-path native/Cargo.toml --check
  step "cargo clippy" cargo clippy --quiet --release --manifest-path native/Cargo.toml --all-targets -- -D warnings
  step "cargo test (module unit tests)" cargo test --quiet --release --manifest-path native/Cargo.toml
fi

# bun test <name> <files…>: one run of bun test, its pass and fail counts added to the totals.
passed=0
bun_failed=0
bun_run() {
  local name=$1; shift
  local log
  log=$(mktemp)
  printf '\n=== %s\n' "$name"
  "$bin/bun" test --timeout 180000 "$@" 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] || failed+=("$name")
  passed=$((passed + $(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)))
  bun_failed=$((bun_failed + $(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)))
  rm -f "$log"
}

server8=$(command -v valkey-server)
v8=$("$server8" --version | grep -Eo 'v=[0-9.]+' | cut -c3-)
# The suites that drive Chromium each run in a process of their own: several of them in one
# process broke under load (the browser closing mid-test, glide's socket failing), a failure none
# of them shows alone.
browser_suites=$(grep -l 'suiteBrowser\|launchChromium' tests/ui/*.test.ts)
others=()
for f in tests/*/; do [ "$f" = tests/ui/ ] || others+=("$f"); done
for f in tests/ui/*.test.ts; do grep -qx "$f" <<<"$browser_suites" || others+=("$f"); done
bun_run "bun test (every suite but the browser ones, Valkey $v8)" "${others[@]}"
for f in $browser_suites; do
  bun_run "bun test $f (Chromium, a process of its own, Valkey $v8)" "$f"
done
# The real-server suites again on Valkey 9 (bootstrap installs it into .tmp/valkey-9): the module,
# both backends on one server and on a cluster, and every reliability suite.
server9="$root/.tmp/valkey-9/valkey-server"
if [ -x "$server9" ]; then
  VALKEY_SERVER=$server9 bun_run "bun test on Valkey $("$server9" --version | grep -Eo 'v=[0-9.]+' | cut -c3-) (native, client, reliability)" \
    tests/native/ tests/client/ tests/reliability/
else
  printf '\n=== Valkey 9 is not installed (see tools/bootstrap.sh): its suites did not run\n'
fi

# The same keyspace and behaviour files under Deno: tests/deno.json maps `bun:test` onto Deno.test
# (tests/_deno/shim.ts). Standalone only (the cluster combos stay with Bun). `--no-check`: tsc
# checks these files above; the shim itself is checked here.
deno_test=(env -u RUST_BACKTRACE EMQ_TOPOLOGIES=standalone "$bin/deno" test --quiet --no-check --config tests/deno.json
  --preload tests/_preload.ts --allow-read --allow-write --allow-env --allow-sys --allow-ffi --allow-run
  --allow-net=127.0.0.1 tests/_deno/shim_check.ts tests/keyspace/ tests/client/behaviour.test.ts tests/client/tracing.test.ts)
step "deno check (the bun:test shim)" env -u RUST_BACKTRACE "$bin/deno" check --quiet --config tests/deno.json tests/_deno/
step "deno test (keyspace, client behaviour and tracing standalone; same files as bun test)" "${deno_test[@]}"

if [ -f dev/demo.ts ]; then
  step "demo under Bun (short)" ./emq demo --seconds 2
  step "demo under Deno (short)" env EMQ_RUNTIME=deno ./emq demo --seconds 2
fi

# Last: every server the tests started must be gone (lib/server/orphans.ts kills what is left).
step "no valkey-server left running by the tests" "$bin/bun" tools/leaks.ts

printf '\n'
if [ ${#failed[@]} -gt 0 ]; then
  printf 'failed steps: %s\n' "${failed[*]}"
  printf 'tests: %s passed, %s failed\n' "$passed" "$((bun_failed > 0 ? bun_failed : 1))"
  exit 1
fi
printf 'tests: %s passed, %s failed\n' "$passed" "$bun_failed"
