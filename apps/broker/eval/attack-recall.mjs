#!/usr/bin/env node
// How many poisoned tool descriptions the broker's injection rules flag.
//
// eval/attacks.jsonl holds 26 malicious descriptions written for this
// evaluation after the attack patterns in public reports: tool poisoning with
// an <IMPORTANT> block and tool shadowing (Invariant Labs, "MCP Security
// Notification: Tool Poisoning Attacks", 2025), instructions that run before
// any call ("line jumping", Trail of Bits, 2025), ASCII smuggling in Unicode
// tag characters (Embrace The Red, 2024), poisoned parameter descriptions
// ("full-schema poisoning", CyberArk, 2025). None is copied from those
// reports. Each line: id, pattern, target, tool, description, optional
// inputSchema. eval/attack-victims.json lists honest tools of other servers
// (the shadowing rule looks for their names). The last four attacks
// (preference manipulation, a paraphrased override, exfiltration through a
// parameter, ...) show limits: the rules are expected to miss some of them.
//
// Run from apps/broker:
//   node eval/attack-recall.mjs          # report
//   node eval/attack-recall.mjs --json
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { loadTrustModules } from './load-trust.mjs';
import { reviewDescription } from './real-tools.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const trust = await loadTrustModules();
const attacks = (await readFile(path.join(here, 'attacks.jsonl'), 'utf8'))
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line));
const victims = JSON.parse(
  await readFile(path.join(here, 'attack-victims.json'), 'utf8'),
);
const tools = [...attacks, ...victims].map((tool) => ({
  name: `${tool.target}_${tool.tool}`,
  target: tool.target,
  bareName: tool.tool,
}));
const context = trust.createShadowingContext(tools);
const results = attacks.map((attack) => {
  const tool = {
    name: `${attack.target}_${attack.tool}`,
    target: attack.target,
    bareName: attack.tool,
    description: attack.description,
    inputSchema: attack.inputSchema,
  };
  const { cleaned, flags } = reviewDescription(trust, tool, context);
  return {
    id: attack.id,
    pattern: attack.pattern,
    hiddenRemoved: cleaned.removed,
    rules: flags.map((flag) => flag.rule),
  };
});
const flagged = results.filter((result) => result.rules.length > 0);
if (process.argv.includes('--json')) {
  process.stdout.write(
    `${JSON.stringify({ attacks: results.length, flagged: flagged.length, results }, null, 2)}\n`,
  );
} else {
  const lines = [
    `injection rules on ${results.length} poisoned descriptions: ${flagged.length} flagged (${((flagged.length / results.length) * 100).toFixed(0)} %)`,
    ...results.map(
      (result) =>
        `  ${result.rules.length > 0 ? 'flagged' : 'MISSED '} ${result.id} (${result.pattern})${result.rules.length > 0 ? `: ${result.rules.join(', ')}` : ''}${result.hiddenRemoved > 0 ? `; ${result.hiddenRemoved} hidden characters removed` : ''}`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
