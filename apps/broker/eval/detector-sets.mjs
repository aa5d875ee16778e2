// The attack sets and clean sets the detector is chosen and scored on, each
// tool with the signals the detector finds in it (found once; scoring them
// under a weighting is cheap):
//
// - attack sets: MSB's 144 attacked descriptions (msb/), mcp-guardbench's
//   poisoned tool definitions (guardbench/), and the 26 descriptions of
//   attacks.jsonl written for this project;
// - clean sets: the 760 real tools (LiveMCPBench, MetaTool, the seed
//   catalog), the Gorilla-HF and Seal-Tools dev sets, MSB's clean twins and
//   mcp-guardbench's honest tool definitions.
//
// Each set is one catalog for the `other-tool` signal, as a gateway would
// serve it; a tool is reviewed as the broker does (cleaned, then its
// description, tag text and schema read).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadGuardbench } from './guardbench/guardbench-data.mjs';
import { DESCRIPTION_KINDS, loadMsb } from './msb/msb-data.mjs';
import { MORE_SETS, loadRealTools, loadSet } from './real-tools.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/** A tool as the detector reads it, with its signals. */
function reviewed(rules, sanitize, tool, context) {
  const cleaned = sanitize.sanitizeDescription({
    text: tool.description ?? '',
  });
  const hits = rules.toolSignals({
    tool,
    description: cleaned.text,
    tagText: cleaned.tagText,
    inputSchema: tool.inputSchema,
    context,
  });
  return { id: tool.id ?? tool.name, kind: tool.kind, hits };
}

function reviewAll(rules, sanitize, tools, contextTools = tools) {
  const context = rules.createShadowingContext(contextTools);
  return tools.map((tool) => reviewed(rules, sanitize, tool, context));
}

const qualified = (target, name) => ({
  name: `${target}_${name}`,
  target,
  bareName: name,
});

async function msbSets(rules, sanitize) {
  const msb = loadMsb();
  const asTool = (definition) => ({
    ...qualified(definition.target, definition.name),
    id: `${definition.server}/${definition.name}${definition.id ? ` (${definition.id})` : ''}`,
    kind: definition.kind,
    description: definition.description,
    inputSchema: definition.inputSchema,
  });
  const catalog = [
    ...[...msb.clean, ...msb.attacked].map(asTool),
    ...msb.support.map((tool) => qualified(tool.target, tool.name)),
  ];
  const attacks = msb.attacked
    .filter((definition) => DESCRIPTION_KINDS.includes(definition.kind))
    .map(asTool);
  return {
    attack: reviewAll(rules, sanitize, attacks, catalog),
    clean: reviewAll(rules, sanitize, msb.clean.map(asTool), catalog),
  };
}

function guardbenchSets(rules, sanitize) {
  const { attackTools, cleanTools } = loadGuardbench();
  const asTool = (tool) => ({
    ...qualified(tool.target, tool.name),
    id: `${tool.id}/${tool.name}`,
    kind: tool.category,
    description: tool.description,
    inputSchema: tool.inputSchema,
  });
  const catalog = [...attackTools, ...cleanTools].map(asTool);
  return {
    attack: reviewAll(rules, sanitize, attackTools.map(asTool), catalog),
    clean: reviewAll(rules, sanitize, cleanTools.map(asTool), catalog),
  };
}

async function projectSet(rules, sanitize) {
  const attacks = (await readFile(path.join(here, 'attacks.jsonl'), 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
  const victims = JSON.parse(
    await readFile(path.join(here, 'attack-victims.json'), 'utf8'),
  );
  const tools = attacks.map((attack) => ({
    ...qualified(attack.target, attack.tool),
    id: attack.id,
    kind: attack.pattern,
    description: attack.description,
    inputSchema: attack.inputSchema,
  }));
  const catalog = [
    ...tools,
    ...victims.map((tool) => qualified(tool.target, tool.tool)),
  ];
  return reviewAll(rules, sanitize, tools, catalog);
}

/**
 * Every set, reviewed: `{ attack: [{ name, items }], clean: [{ name, items, real }] }`
 * where an item is `{ id, kind, hits }` and `real` marks the 760 real tools' sets.
 */
export async function loadDetectorSets(rules, sanitize) {
  const msb = await msbSets(rules, sanitize);
  const guardbench = guardbenchSets(rules, sanitize);
  const project = await projectSet(rules, sanitize);
  const realTools = await loadRealTools();
  const clean = [];
  for (const set of ['LiveMCPBench', 'MetaTool', 'seed']) {
    const tools = realTools.filter((tool) => tool.set === set);
    clean.push({
      name: set,
      real: true,
      items: reviewAll(rules, sanitize, tools),
    });
  }
  for (const set of MORE_SETS) {
    clean.push({
      name: set.name,
      real: false,
      items: reviewAll(rules, sanitize, await loadSet(set)),
    });
  }
  clean.push({ name: 'MSB clean twins', real: false, items: msb.clean });
  clean.push({
    name: 'mcp-guardbench honest tools',
    real: false,
    items: guardbench.clean,
  });
  return {
    attack: [
      { name: 'MSB', items: msb.attack },
      { name: 'mcp-guardbench', items: guardbench.attack },
      { name: 'attacks.jsonl', items: project },
    ],
    clean,
  };
}
