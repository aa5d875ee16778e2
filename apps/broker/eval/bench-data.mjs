// Where the retrieval dev sets live: the catalog lab's benchmark data,
// packages/catalog-lab/data, each set a folder with its tools.jsonl, LICENSE
// and SOURCE. The evals read them only through this helper.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DATA = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../packages/catalog-lab/data',
);

/** The path of `file` of the dev set `set` (`livemcpbench`, `metatool`, `gorilla-hf`, `seal-tools`). */
export function benchDataFile(set, file = 'tools.jsonl') {
  return path.join(DATA, set, file);
}
