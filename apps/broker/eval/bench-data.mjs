// Where the retrieval dev sets live: the catalog's benchmark data, in
// packages/catalog-lab/bench/data or (before that move)
// packages/catalog/bench/data, each set a folder with its tools.jsonl,
// LICENSE and SOURCE. The evals read them only through this helper.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../..',
);
const HOMES = [
  'packages/catalog-lab/bench/data',
  'packages/catalog/bench/data',
];

/** The path of `file` of the dev set `set` (`livemcpbench`, `metatool`, `gorilla-hf`, `seal-tools`). */
export function benchDataFile(set, file = 'tools.jsonl') {
  for (const home of HOMES) {
    const candidate = path.join(repoRoot, home, set, file);
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(
    `no ${set}/${file} under ${HOMES.join(' or ')}: run the evals from a full checkout of the repository`,
  );
}
