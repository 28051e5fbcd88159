#!/usr/bin/env bash
# cargo mutants on the module's pure files, native/src/keyspace.rs and native/src/gates.rs, in a
# scratch copy of native/ and tests/vectors/: the unit tests read ../tests/vectors, which cargo
# mutants' own copy of native/ leaves behind, and --in-place on the checkout would show mutated
# sources to anyone building native/ meanwhile. Extra arguments go to cargo mutants; the report is
# .tmp/mutants.out/ (missed.txt lists survivors). Needs `cargo install cargo-mutants --locked`.
# Not part of ./emq test (minutes); scores: bench/RESULTS.md, "Mutation testing".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
tar -C "$root" --exclude=native/target --exclude=native/wasm/target -cf - native tests/vectors | tar -C "$scratch" -xf -
mkdir -p "$root/.tmp"
cd "$scratch/native"
env -u RUST_BACKTRACE CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$scratch/target}" \
  cargo mutants --in-place --no-shuffle --file src/keyspace.rs --file src/gates.rs \
  --cargo-test-arg=--lib --output "$root/.tmp" "$@"
