#!/usr/bin/env bash
# Packs every publishable package, installs the tarballs into an empty folder
# with npm (as a user would from the registry), imports each library from plain
# Node ESM, and runs the broker through `npx heretek-lazy-broker`, answering
# tools/list to the MCP Inspector CLI. Run after `pnpm build`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/heretek-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
pnpm_cmd=${PNPM:-"npx -y pnpm@12.4.2"}
echo "smoke: node $(node --version), npm $(npm --version), in $work"

mkdir -p "$work/tarballs" "$work/app"
for pkg in prefix handoff catalog gateway-client skills opencode claude-code; do
  (cd "$root/packages/$pkg" && $pnpm_cmd pack --pack-destination "$work/tarballs" >/dev/null)
done
(cd "$root/apps/broker" && $pnpm_cmd pack --pack-destination "$work/tarballs" >/dev/null)
ls "$work/tarballs"
for tarball in "$work"/tarballs/*.tgz; do
  tar -tzf "$tarball" | grep -x 'package/LICENSE' >/dev/null || { echo "smoke: $tarball has no LICENSE" >&2; exit 1; }
done
echo "smoke: every tarball carries LICENSE"

cd "$work/app"
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error "$work"/tarballs/*.tgz

node --input-type=module -e '
const names = ["@heretek/prefix", "@heretek/handoff", "@heretek/catalog", "@heretek/gateway-client", "@heretek/skills", "@heretek/broker"];
for (const name of names) {
  const mod = await import(name);
  if (typeof mod.VERSION !== "string" || mod.VERSION.startsWith("0.0.0")) throw new Error(`${name}: no VERSION export`);
  console.log(`smoke: import ${name}@${mod.VERSION} ok (${Object.keys(mod).length} exports)`);
}
const { canCallMutating } = await import("@heretek/prefix");
if (canCallMutating("director") !== false) throw new Error("director must be read-only");
const { ToolCatalog } = await import("@heretek/catalog");
const hit = ToolCatalog.fromSeed().search({ query: "android adb install apk" }).hits[0];
if (!hit || !hit.name.startsWith("adb_")) throw new Error("seed search failed: " + JSON.stringify(hit));
console.log("smoke: catalog search ok:", hit.name);
const plugin = (await import("@heretek/opencode")).default;
if (typeof plugin?.server !== "function") throw new Error("@heretek/opencode: no OpenCode plugin module as its default export");
console.log(`smoke: import @heretek/opencode ok (plugin ${plugin.id})`);
'

# The Claude Code plugin is its package folder: the files Claude Code reads,
# the broker's bundle that runs on this Node, and the hook program.
plugin="$work/app/node_modules/@heretek/claude-code"
for file in .claude-plugin/plugin.json .mcp.json hooks/hooks.json agents/director.md; do
  [ -f "$plugin/$file" ] || { echo "smoke: @heretek/claude-code has no $file" >&2; exit 1; }
done
node "$plugin/broker/cli.js" --version 2>&1 | grep -q . || { echo "smoke: the plugin's broker does not start" >&2; exit 1; }
echo '{"agent_type":"heretek:staff-backend"}' | node "$plugin/hooks/heretek-hook.mjs" subagent-start | grep -q '# Role: staff-backend' ||
  { echo "smoke: the plugin's hook gives no role layers" >&2; exit 1; }
echo "smoke: @heretek/claude-code holds the plugin; its broker and hook run on node $(node --version)"

version=$(npx --no-install heretek-lazy-broker --version 2>&1 >/dev/null)
echo "smoke: npx heretek-lazy-broker --version -> $version"

out=$(npx -y @modelcontextprotocol/inspector@2.12.0 --cli npx heretek-lazy-broker \
  -e HERETEK_BROKER_OFFLINE=1 --method tools/list 2>"$work/inspector.err") || {
  cat "$work/inspector.err" >&2
  exit 1
}
for tool in mcp_search_tools mcp_inspect_schema mcp_call_tool; do
  grep -q "\"$tool\"" <<<"$out" || { echo "smoke: tools/list lacks $tool" >&2; echo "$out" >&2; exit 1; }
done
count=$(grep -c '"name": "mcp_' <<<"$out" || true)
[ "$count" = 3 ] || { echo "smoke: expected 3 tools, saw $count" >&2; exit 1; }
echo "smoke: npx heretek-lazy-broker answered tools/list with the 3 meta-tools on node $(node --version)"
