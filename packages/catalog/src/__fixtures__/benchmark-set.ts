// Test fixture: a vendored benchmark set (packages/catalog-lab/data/<name>) as catalog entries, one
// target per server, and its queries.
import { readFileSync } from 'node:fs';
import { toolEntryFromMcpTool } from '../entries.js';
import type { ToolEntry } from '../types.js';

const lines = <Row>(file: URL): Row[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Row);

/** The entries (tools named `<server>__<tool>` become `<target>_<tool>`) and queries of a set. */
export function benchmarkSet(name: string): {
  entries: ToolEntry[];
  queries: { query: string }[];
} {
  const folder = new URL(`../../../catalog-lab/data/${name}/`, import.meta.url);
  const tools = lines<{
    name: string;
    server: string;
    description?: string;
    inputSchema?: unknown;
  }>(new URL('tools.jsonl', folder));
  const entries = tools.map(
    ({ name: full, server, description, inputSchema }) => {
      const target = server
        .toLowerCase()
        .replace(/[^a-z0-9.-]+/g, '-')
        .replace(/^[^a-z0-9]+|-+$/g, '');
      const bare = full.includes('__')
        ? full.slice(full.indexOf('__') + 2)
        : full;
      return toolEntryFromMcpTool({
        backend: { backend: server, target, profile: 'core' },
        tool: { name: bare, description: description ?? '', inputSchema },
      });
    },
  );
  return { entries, queries: lines(new URL('queries.jsonl', folder)) };
}
