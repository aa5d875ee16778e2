// Benchmark: assembling a role's prompt (read 4 sources, normalise, render
// permissions and profile, hash 4 layers and the prefix) against the
// baseline of only reading the same 3 source files. Imports the built dist.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ROLE_NAMES,
  PROFILE_NAMES,
  assemblePrefixCachedPrompt,
  measurePrompt,
} from '../dist/index.js';

const workspaceRoot = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
);
const combos = ROLE_NAMES.flatMap((role) =>
  PROFILE_NAMES.map((activeProfile) => ({ role, activeProfile })),
);
const ROUNDS = 200;

function time(label, fn) {
  for (let i = 0; i < 20; i += 1) fn(); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < ROUNDS; i += 1) fn();
  const perCall =
    Number(process.hrtime.bigint() - start) / 1e3 / ROUNDS / combos.length;
  process.stdout.write(
    `${label.padEnd(44)} ${perCall.toFixed(1).padStart(8)} µs per prompt\n`,
  );
  return perCall;
}

const baseline = time('baseline: read the 3 source files', () => {
  for (const { role } of combos) {
    readFileSync(join(workspaceRoot, 'roles/shared/01-context.md'), 'utf8');
    readFileSync(join(workspaceRoot, 'roles/shared/02-protocol.md'), 'utf8');
    readFileSync(join(workspaceRoot, `roles/${role}.md`), 'utf8');
  }
});
const assemble = time('assemblePrefixCachedPrompt', () => {
  for (const combo of combos)
    assemblePrefixCachedPrompt({ ...combo, workspaceRoot });
});
process.stdout.write(
  `ratio assemble / baseline: ${(assemble / baseline).toFixed(2)}x\n`,
);

const prompt = assemblePrefixCachedPrompt({
  role: 'director',
  workspaceRoot,
  activeProfile: 'core',
});
let start = process.hrtime.bigint();
measurePrompt(prompt);
process.stdout.write(
  `first measurePrompt (loads js-tiktoken and the o200k_base ranks): ${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(0)} ms\n`,
);
start = process.hrtime.bigint();
for (let i = 0; i < 50; i += 1) measurePrompt(prompt);
process.stdout.write(
  `measurePrompt of a whole prompt (~2.3k tokens, every layer and the prompt): ${(Number(process.hrtime.bigint() - start) / 1e6 / 50).toFixed(2)} ms\n`,
);
process.stdout.write(`node ${process.version}\n`);
