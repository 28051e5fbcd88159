#!/usr/bin/env bash
# BullMQ's own shared test suite (the plain tests/*.test.ts of taskforcesh/bullmq, the files it runs
# against every backend) on the EchoMQ backend (issue 41; results in docs/design/bullmq.md,
# "BullMQ's own suite"). Nothing of BullMQ is copied into this repository: the suite is unpacked
# from a git clone of bullmq into a scratch directory outside it, its dependencies installed there
# by npm, and a vitest setup file there calls setDefaultBackendFactory(createEchoMQBackend(...)) from
# this checkout. One valkey-server (the module loaded) on a free loopback port; one file at a time.
#
#   tools/bullmq_suite.sh [files…]
#     BULLMQ_GIT   a git directory of taskforcesh/bullmq (required: e.g. a bare clone of
#                  https://github.com/taskforcesh/bullmq)
#     BULLMQ_REF   the ref to unpack (default: v6.2.0, the newest tag there)
#     SCRATCH      where (default: ${TMPDIR:-/tmp}/emq-bullmq-suite; must be outside this repository)
#     EMQ_BACKEND  module | scripts (default: module)
#   files: names under tests/ (default: the 22 shared files). Prints one line per file (passed,
#   failed, skipped) and writes SCRATCH/results/<backend>/<file>.json (vitest's JSON report).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BULLMQ_GIT="${BULLMQ_GIT:?set BULLMQ_GIT to a git directory of taskforcesh/bullmq (a clone)}"
BULLMQ_REF="${BULLMQ_REF:-v6.2.0}"
SCRATCH="${SCRATCH:-${TMPDIR:-/tmp}/emq-bullmq-suite}"
BACKEND="${EMQ_BACKEND:-module}"
case "$SCRATCH" in "$ROOT"/*) echo "SCRATCH must be outside the repository" >&2; exit 2 ;; esac
SHARED=(bulk clean concurrency deduplication delay events flow getters job job_cancellation
  job_cancellation_advanced job_scheduler job_scheduler_stress lock_manager metrics obliterate pause
  queue rate_limiter stalled_jobs telemetry_interface worker)
FILES=("$@")
[ ${#FILES[@]} -eq 0 ] && FILES=("${SHARED[@]}")

if [ ! -f "$SCRATCH/.unpacked-$BULLMQ_REF" ]; then
  rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
  git --git-dir="$BULLMQ_GIT" archive "$BULLMQ_REF" | tar -x -C "$SCRATCH"
  # only what the shared suite needs: BullMQ's own dependencies, vitest and the tests' helpers
  (cd "$SCRATCH" && node -e '
    const p = require("./package.json");
    const keep = ["vitest", "sinon", "ioredis", "moment", "rrule", "test-console", "progress", "minimatch", "fast-glob", "tsx"];
    p.devDependencies.tsx = "4";
    p.devDependencies = Object.fromEntries(Object.entries(p.devDependencies).filter(([k]) => keep.includes(k)));
    delete p.scripts;
    require("fs").writeFileSync("package.json", JSON.stringify(p, null, 2));' &&
    rm -f yarn.lock && npm install --ignore-scripts --no-audit --no-fund >/dev/null &&
    # BullMQ's pretest: its Lua commands into src/scripts (the Redis backend's; the suite imports them)
    npx tsx scripts/generateRawScripts.ts && node scripts/commandTransform.js ./rawScripts ./src/scripts >/dev/null)
  touch "$SCRATCH/.unpacked-$BULLMQ_REF"
fi

# The setup: BullMQ's test connection a no-op client (as its PostgreSQL run has it: the backend
# ignores `connection`), every Queue/Worker/QueueEvents/FlowProducer on the EchoMQ backend.
cat >"$SCRATCH/vitest.echomq.setup.ts" <<EOF
import { setConnectionFactory } from './tests/utils/connection-factory';
import { setDefaultBackendFactory } from './src/utils/create-backend';
import { createEchoMQBackend } from '$ROOT/bullmq.ts';

setConnectionFactory(() => {
  const client: Record<string, unknown> = {
    isCluster: false, status: 'ready', options: {},
    connect: async () => undefined, disconnect: () => undefined, quit: async () => 'OK',
    duplicate: () => client, on: () => client, once: () => client, off: () => client,
    removeListener: () => client, emit: () => false,
  };
  return client as never;
});
process.env.BULLMQ_TEST_BACKEND = 'echomq';
setDefaultBackendFactory(createEchoMQBackend({ url: process.env.EMQ_URL!, backend: process.env.EMQ_BACKEND as 'module' | 'scripts' }) as never);
EOF
cat >"$SCRATCH/vitest.echomq.config.ts" <<'EOF'
import { defineConfig } from 'vitest/config';
export default defineConfig({
  test: {
    include: ['tests/*.test.ts'],
    testTimeout: 20000,
    hookTimeout: 20000,
    setupFiles: ['./vitest.echomq.setup.ts'],
    sequence: { concurrent: false },
    server: { deps: { external: [/node_modules/] } },
  },
});
EOF

PORT=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
MODULE="$ROOT/native/target/release/libemq.so"
LOAD=()
[ -f "$MODULE" ] && LOAD=(--loadmodule "$MODULE")
valkey-server --bind 127.0.0.1 --port "$PORT" --save "" --appendonly no "${LOAD[@]}" --daemonize no >"$SCRATCH/valkey.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do valkey-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

mkdir -p "$SCRATCH/results/$BACKEND"
for f in "${FILES[@]}"; do
  out="$SCRATCH/results/$BACKEND/$f.json"
  (cd "$SCRATCH" && EMQ_URL="valkey://127.0.0.1:$PORT" EMQ_BACKEND="$BACKEND" timeout 900 \
    npx vitest run --config vitest.echomq.config.ts --reporter=json --outputFile="$out" "tests/$f.test.ts" >/dev/null 2>&1) || true
  node -e '
    const fs = require("fs"); const f = process.argv[1];
    if (!fs.existsSync(f)) { console.log(process.argv[2].padEnd(28), "no report (crashed or timed out)"); process.exit(0); }
    const r = JSON.parse(fs.readFileSync(f, "utf8"));
    console.log(process.argv[2].padEnd(28), "total", r.numTotalTests, "passed", r.numPassedTests, "failed", r.numFailedTests, "skipped", r.numPendingTests + (r.numTodoTests || 0));
  ' "$out" "$f"
done
