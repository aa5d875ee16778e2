// What the trust evals share: the real tools they check (the retrieval dev
// sets vendored with the catalog, each with its LICENSE and SOURCE, and the
// broker's offline seed catalog) and one tool's review as the broker does it.
import { readFile } from 'node:fs/promises';
import { SEED_TOOLS } from '@heretek/catalog';
import { benchDataFile } from './bench-data.mjs';

/** The dev sets of the 760 real tools: names are `<server>__<tool>`. */
export const SETS = [
  { name: 'LiveMCPBench', folder: 'livemcpbench' },
  { name: 'MetaTool', folder: 'metatool' },
];

/** The other two dev sets, clean sets of the detector's selection. */
export const MORE_SETS = [
  { name: 'Gorilla-HF', folder: 'gorilla-hf' },
  { name: 'Seal-Tools', folder: 'seal-tools' },
];

/** Tools of a dev set, with the set's name. */
export async function loadSet({ name, folder }) {
  const text = await readFile(benchDataFile(folder), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const tool = JSON.parse(line);
      const split = tool.name.indexOf('__');
      const target = tool.server ?? tool.name.slice(0, split);
      const bareName = split >= 0 ? tool.name.slice(split + 2) : tool.name;
      return {
        set: name,
        name: tool.name,
        target,
        bareName,
        description: tool.description ?? '',
        inputSchema: tool.inputSchema,
      };
    });
}

/** Every tool of the benchmark sets, then the seed catalog's (set `seed`). */
export async function loadRealTools() {
  const tools = [];
  for (const set of SETS) tools.push(...(await loadSet(set)));
  for (const entry of SEED_TOOLS) {
    tools.push({
      set: 'seed',
      name: entry.name,
      target: entry.target,
      bareName: entry.tool,
      description: entry.description,
      inputSchema: entry.inputSchema,
    });
  }
  return tools;
}

/**
 * One tool's review as the broker does it at discovery: the description
 * cleaned, then every rule checked (hidden tag text included) against
 * `context`. Returns the cleaning and the flags.
 */
export function reviewDescription(trust, tool, context) {
  const cleaned = trust.sanitizeDescription({ text: tool.description });
  const flags = trust.flagTool({
    tool,
    description: cleaned.text,
    tagText: cleaned.tagText,
    inputSchema: tool.inputSchema,
    context,
  });
  return { cleaned, flags };
}

/**
 * Every real tool reviewed as the broker does, each set as one catalog (the
 * shadowing rule looks at the other servers of the same set): set, name,
 * hidden characters removed, flags.
 */
export function reviewRealTools(trust, tools) {
  const results = [];
  for (const setName of new Set(tools.map((tool) => tool.set))) {
    const members = tools.filter((tool) => tool.set === setName);
    const context = trust.createShadowingContext(members);
    for (const tool of members) {
      const { cleaned, flags } = reviewDescription(trust, tool, context);
      results.push({
        set: setName,
        name: tool.name,
        hidden: cleaned.removed,
        flags,
      });
    }
  }
  return results;
}
