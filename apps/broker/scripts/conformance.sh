#!/usr/bin/env bash
# Runs the MCP conformance suite's server scenarios that apply to a tools-only
# stdio server against the built broker (offline seed catalog), put behind
# supergateway's Streamable HTTP front on a free loopback port (the suite
# speaks HTTP only; supergateway listens on all interfaces, which is fine in
# CI). Exits non-zero if any scenario fails; always stops what it started.
# Which scenarios do not apply, and why: scripts/CONFORMANCE.md.
#
#   bash scripts/conformance.sh                      # from apps/broker, after a build
#   CONFORMANCE_VERSION=0.1.16 bash scripts/conformance.sh
#
# The suite version defaults to 0.1.13 on Node 20-21 (0.1.14+ crash there) and
# 0.1.16 on Node 22+; the installed devDependency is used when it matches,
# otherwise npx fetches the asked version.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ -z "${CONFORMANCE_VERSION:-}" ]; then
  if [ "$node_major" -ge 22 ]; then CONFORMANCE_VERSION=0.1.16; else CONFORMANCE_VERSION=0.1.13; fi
fi
SCENARIOS=${CONFORMANCE_SCENARIOS:-"server-initialize ping tools-list"}

if [ ! -f dist/cli.js ]; then
  echo "conformance: dist/cli.js is missing; build first (npx -y pnpm@12.4.2 exec turbo run build --filter=@heretek/broker...)" >&2
  exit 2
fi
installed=$(node -p 'require("./node_modules/@modelcontextprotocol/conformance/package.json").version' 2>/dev/null || echo none)
if [ "$installed" = "$CONFORMANCE_VERSION" ]; then
  conformance=("$here/node_modules/.bin/conformance")
else
  conformance=(npx -y "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION")
fi
supergateway="$here/node_modules/supergateway/dist/index.js"

port=$(node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
log=$(mktemp "${TMPDIR:-/tmp}/broker-conformance.XXXXXX")
started=$(date +%s)

# supergateway runs `node dist/cli.js` once per session; a broker exits when
# its stdin closes, so stopping supergateway ends them too. Any that linger
# past 3 s are stopped by pid.
HERETEK_BROKER_OFFLINE=1 node "$supergateway" \
  --stdio "node $here/dist/cli.js" --outputTransport streamableHttp --stateful \
  --port "$port" --logLevel info --healthEndpoint /healthz >"$log" 2>&1 &
gateway_pid=$!

descendants() {
  local pid child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}
cleanup() {
  local status=$? pids
  pids=$(descendants "$gateway_pid")
  kill "$gateway_pid" 2>/dev/null || true
  wait "$gateway_pid" 2>/dev/null || true
  for _ in 1 2 3 4 5 6; do
    local alive=
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ -z "$alive" ] && break
    sleep 0.5
  done
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then
    echo "conformance: supergateway log:" >&2
    tail -n 40 "$log" >&2 || true
  fi
  rm -f "$log"
  exit "$status"
}
trap cleanup EXIT INT TERM

ready=
for _ in $(seq 1 100); do
  if node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' \
    "http://127.0.0.1:$port/healthz" 2>/dev/null; then
    ready=1
    break
  fi
  kill -0 "$gateway_pid" 2>/dev/null || break
  sleep 0.2
done
if [ -z "$ready" ]; then
  echo "conformance: supergateway did not come up on port $port" >&2
  exit 1
fi

echo "conformance: suite $CONFORMANCE_VERSION on node $(node --version), broker behind supergateway at http://127.0.0.1:$port/mcp"
failed=()
for scenario in $SCENARIOS; do
  if out=$("${conformance[@]}" server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" 2>&1); then
    echo "conformance: $scenario passed ($(grep -o 'Passed: [0-9]*/[0-9]*' <<<"$out" | tail -1))"
  else
    echo "$out" >&2
    echo "conformance: $scenario FAILED" >&2
    failed+=("$scenario")
  fi
done
echo "conformance: ${#failed[@]} failed of $(wc -w <<<"$SCENARIOS") scenarios in $(($(date +%s) - started)) s"
[ "${#failed[@]}" -eq 0 ]
