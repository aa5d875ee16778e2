#!/usr/bin/env node
// False-positive rate of the broker's injection rules on real tools.
//
// Reads the real tool sets vendored with the catalog's benchmark
// (packages/catalog-lab/data/{livemcpbench,metatool}/tools.jsonl, each with
// its LICENSE and SOURCE) and the broker's offline seed catalog, cleans every
// description with src/trust/sanitize.ts and checks it with
// src/trust/injection-rules.ts, exactly as the broker does. None of these
// tools is malicious, so every flag is a false positive.
//
// Run from apps/broker (after `pnpm install`; the catalog must be built):
//   node eval/flag-rate.mjs            # report, exit 1 above the 1 % limit
//   node eval/flag-rate.mjs --json     # the same as JSON
//
// The TypeScript modules are transpiled on the fly (eval/load-trust.mjs), so
// the figure is always that of the current source.
import process from 'node:process';
import { loadTrustModules } from './load-trust.mjs';
import { loadRealTools, reviewRealTools } from './real-tools.mjs';

const LIMIT = 0.01;
const trust = await loadTrustModules();
const tools = await loadRealTools();

const results = reviewRealTools(trust, tools);

const flagged = results.filter((result) => result.flags.length > 0);
const rate = flagged.length / results.length;
const perSet = Object.fromEntries(
  [...new Set(results.map((result) => result.set))].map((set) => {
    const members = results.filter((result) => result.set === set);
    return [
      set,
      {
        tools: members.length,
        flagged: members.filter((result) => result.flags.length > 0).length,
      },
    ];
  }),
);
if (process.argv.includes('--json')) {
  process.stdout.write(
    `${JSON.stringify({ tools: results.length, flagged: flagged.length, rate, limit: LIMIT, perSet, flaggedTools: flagged }, null, 2)}\n`,
  );
} else {
  const lines = [
    `injection rules on ${results.length} real tools (${Object.entries(perSet)
      .map(([set, { tools: count }]) => `${set} ${count}`)
      .join(', ')})`,
    `flagged: ${flagged.length} (${(rate * 100).toFixed(2)} %, limit ${LIMIT * 100} %)`,
    ...Object.entries(perSet).map(
      ([set, figures]) => `  ${set}: ${figures.flagged} of ${figures.tools}`,
    ),
    ...flagged.map(
      (result) =>
        `  - ${result.set} ${result.name}: ${result.flags
          .map((flag) => `${flag.rule} (${JSON.stringify(flag.excerpt)})`)
          .join('; ')}`,
    ),
    `tools with hidden characters removed: ${results.filter((result) => result.hidden > 0).length}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
process.exitCode = rate <= LIMIT ? 0 : 1;
