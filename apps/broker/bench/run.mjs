// The broker's bench suite: runs each bench in its own process (so one's
// JIT and heap never colour another's) and prints their JSON reports. Build
// first; see the README for what each figure means.
//
//   npx -y pnpm@12.4.2 run bench              # everything
//   npx -y pnpm@12.4.2 run bench load discovery   # some
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { requireBuilt } from './lib.mjs';

const BENCHES = {
  'cold-start': 'cold-start.mjs',
  'cold-start-profile': 'cold-start-profile.mjs',
  mediated: 'mediated.mjs',
  'call-profile': 'call-profile.mjs',
  discovery: 'discovery.mjs',
  load: 'load.mjs',
  scale: 'scale.mjs',
  memory: 'memory.mjs',
};

requireBuilt();
const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!(name in BENCHES)) {
    process.stderr.write(
      `bench: unknown bench ${JSON.stringify(name)}; choose from ${Object.keys(BENCHES).join(', ')}\n`,
    );
    process.exit(2);
  }
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : Object.keys(BENCHES)) {
  process.stderr.write(`bench: ${name}\n`);
  const script = fileURLToPath(new URL(BENCHES[name], import.meta.url));
  const { status } = spawnSync(process.execPath, ['--expose-gc', script], {
    stdio: 'inherit',
  });
  if (status !== 0) {
    failed++;
    process.stderr.write(`bench: ${name} failed (exit ${status})\n`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
