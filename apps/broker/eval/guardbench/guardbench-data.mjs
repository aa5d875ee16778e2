// mcp-guardbench as tool sets and result samples for the broker's trust
// evals. cases.json records the corpus's frames (SOURCE.md says which and
// how); this module sorts them by what the broker reads:
//
// - description cases: each tool of a `tools/list` result, and a server's
//   `initialize` instructions read as the description of a tool of that
//   server; a frame's tools are one server (target `gb<n>`). In an attack
//   frame, the tools the case names as honest siblings (every tool but the
//   poisoned one) are clean tools;
// - result cases: `content` text items, prompt messages and resource texts;
// - the rest (hidden-character-only frames, which the cleaning handles;
//   client requests, server-initiated requests, a handshake with no
//   text) is not read.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** In a multi-tool attack frame, the one poisoned tool; every other tool is honest. */
const POISONED = {
  'owasp-mcp-1-multitool-poisoning': 'poisoned',
  'deadbugz-supply-chain-mongodb-tool-poisoning': 'find',
};

/** Attack frames whose only content is a hidden character: the cleaning's cases, not the detector's. */
export const CLEANING_ONLY = new Set(['owasp-mcp-1-ansi-in-description']);

/** Result attacks that are not instructions to the agent (credential egress, renderer code). */
export const NOT_INJECTION = new Set([
  'MCP-CREDENTIAL-EXFIL',
  'MCP-CODE-INJECTION',
]);

function resultTexts(result) {
  if (Array.isArray(result.content))
    return result.content
      .filter((item) => item.type === 'text')
      .map((item) => item.text);
  if (Array.isArray(result.contents))
    return result.contents
      .map((item) => item.text)
      .filter((text) => typeof text === 'string');
  if (Array.isArray(result.messages))
    return result.messages
      .map((message) => message.content?.text)
      .filter((text) => typeof text === 'string');
  return [];
}

/**
 * The corpus sorted: `attackTools` and `cleanTools` (definitions with
 * `target`, `name`, `description`, `inputSchema`, `id`, `category`),
 * `attackResults` and `honestResults` (`id`, `category`, `text`).
 */
export function loadGuardbench() {
  const { cases } = JSON.parse(
    readFileSync(path.join(here, 'cases.json'), 'utf8'),
  );
  const attackTools = [];
  const cleanTools = [];
  const attackResults = [];
  const honestResults = [];
  cases.forEach((item, index) => {
    const result = item.message.result;
    if (result === undefined) return;
    const target = `gb${index}`;
    const attack = item.bucket !== 'benign';
    if (CLEANING_ONLY.has(item.id)) return;
    if (Array.isArray(result.tools)) {
      for (const tool of result.tools) {
        const poisoned =
          attack && (POISONED[item.id] ?? tool.name) === tool.name;
        (poisoned ? attackTools : cleanTools).push({
          id: item.id,
          category: item.category,
          target,
          name: tool.name,
          description: tool.description ?? '',
          inputSchema: tool.inputSchema,
        });
      }
      return;
    }
    if (typeof result.instructions === 'string') {
      (attack ? attackTools : cleanTools).push({
        id: item.id,
        category: item.category,
        target,
        name: 'instructions',
        description: result.instructions,
        inputSchema: { type: 'object' },
      });
      return;
    }
    const text = resultTexts(result).join('\n');
    if (text === '') return;
    (attack ? attackResults : honestResults).push({
      id: item.id,
      category: item.category,
      text,
    });
  });
  return { attackTools, cleanTools, attackResults, honestResults };
}
