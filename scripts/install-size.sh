#!/usr/bin/env bash
# What a user's `npm install @heretek/broker` costs: packs the broker and the
# workspace packages it depends on, installs the broker tarball into an empty
# folder with a cold npm cache (registry dependencies are downloaded), and
# prints the install time, size on disk, package count, and the wall time of
# `npx heretek-lazy-broker --version` (median of 5). Run after `pnpm build`.
set -euo pipefail
root=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
# KEEP=<dir>: install there and keep it (to time the installed bin further).
if [ -n "${KEEP:-}" ]; then
  work=$KEEP
  rm -rf "$work" && mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/heretek-size.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
pnpm_cmd=${PNPM:-"npx -y pnpm@12.4.2"}
mkdir -p "$work/tarballs" "$work/app" "$work/cache"
for dir in packages/prefix packages/catalog packages/gateway-client packages/skills apps/broker; do
  (cd "$root/$dir" && $pnpm_cmd pack --pack-destination "$work/tarballs" >/dev/null)
done
cd "$work/app"
npm init -y >/dev/null
# Workspace dependencies resolve to the local tarballs, everything else to the registry.
overrides=$(node -e '
const fs = require("fs"), path = require("path");
const dir = process.argv[1], out = {};
for (const file of fs.readdirSync(dir)) {
  const m = /^heretek-(.+)-\d+\.\d+\.\d+.*\.tgz$/.exec(file);
  if (m && m[1] !== "broker") out["@heretek/" + m[1]] = "file:" + path.join(dir, file);
}
console.log(JSON.stringify(out));' "$work/tarballs")
node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync("package.json"));p.overrides=JSON.parse(process.argv[1]);fs.writeFileSync("package.json",JSON.stringify(p,null,2))' "$overrides"
broker=$(ls "$work"/tarballs/heretek-broker-*.tgz)
start=$(date +%s%N)
npm install --no-audit --no-fund --loglevel=error --cache "$work/cache" "$broker" >/dev/null
install_ms=$(( ($(date +%s%N) - start) / 1000000 ))
size_kb=$(du -sk node_modules | cut -f1)
count=$(npm ls --all --parseable 2>/dev/null | tail -n +2 | sort -u | wc -l)
times=()
for _ in 1 2 3 4 5; do
  t0=$(date +%s%N)
  npx --no-install heretek-lazy-broker --version >/dev/null
  times+=($(( ($(date +%s%N) - t0) / 1000000 )))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
echo "install: ${install_ms} ms (cold npm cache)"
echo "size: $(( size_kb / 1024 )) MB ($size_kb KiB) in node_modules"
echo "packages: $count"
echo "npx heretek-lazy-broker --version: median ${median} ms of 5 (${times[*]})"
echo "largest:"
du -sk node_modules/* node_modules/@*/* 2>/dev/null | grep -v '/@[^/]*$' | sort -rn | head -8 | awk '{printf "  %6d KiB  %s\n", $1, $2}'
