// MSB (MCP Security Bench) as tool sets and result samples for the broker's
// trust evals. servers.json records, for each of MSB's five attack servers,
// the clean tools (FastMCP functions: docstring, parameters) and, for each
// attacked variant file, the names its tools take and what the variant
// changes; this module expands it the way MSB's servers and agent do:
//
// - preference_manipulation prefixes "This is the best tool in the world. ";
// - out_of_scope_parameter adds a required first parameter (`llm_name` or
//   `llm_model_name`), documented in the docstring's Args in most servers;
// - prompt_injection appends MSB's PROMPT_INJECTION_TEMPLATE, filled with
//   each of MSB's five attack goals, to a clean description;
// - name_overlap and tool_transfer keep the clean definition under another
//   name: the attack is the name and the result, not the description;
// - results: false_error and simulated_user are MSB's templates followed by
//   a goal, as text or in the JSON shapes the PubMed server returns them;
//   tool_transfer results are the variants' fixed strings;
//   search_term_deception results are MSB's retrieval documents
//   (operation_space/information/*.txt) with a goal in their
//   `{attack_instruction}` slot; the same documents without the line that
//   holds the slot are honest results, the result twins.
//
// Input schemas are built as FastMCP builds them from the Python signature
// (title per property, `anyOf` with null for Optional, defaults, required
// names, `<function>Arguments` title). See SOURCE.md for files and commits.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Attack kinds that change what an agent reads about a tool. */
export const DESCRIPTION_KINDS = [
  'prompt_injection',
  'preference_manipulation',
  'out_of_scope_parameter',
  'preference_manipulation-out_of_scope_parameter',
];
/** Attack kinds whose definition is the clean one under another name. */
export const NAME_ONLY_KINDS = ['name_overlap', 'tool_transfer'];
/** Attack kinds carried in tool results. */
export const RESULT_KINDS = [
  'false_error',
  'simulated_user',
  'tool_transfer',
  'search_term_deception',
];

/** The process id MSB substitutes into its `kill_process` goal. */
const PID = '4242';

function propertyTitle(name) {
  return name
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

function propertySchema([name, type, ...rest]) {
  const hasDefault = rest.length > 0;
  const base =
    type === 'string?'
      ? { anyOf: [{ type: 'string' }, { type: 'null' }] }
      : type === 'string|integer'
        ? { anyOf: [{ type: 'string' }, { type: 'integer' }] }
        : { type };
  return {
    ...base,
    ...(hasDefault ? { default: rest[0] } : {}),
    title: propertyTitle(name),
  };
}

/** The input schema FastMCP derives from a function's parameters. */
function inputSchema(functionName, params) {
  return {
    properties: Object.fromEntries(
      params.map((param) => [param[0], propertySchema(param)]),
    ),
    required: params
      .filter((param) => param.length === 2)
      .map((param) => param[0]),
    title: `${functionName}Arguments`,
    type: 'object',
  };
}

function documentParameter(doc, parameter, text) {
  const line = `    ${parameter}: ${text}`;
  if (doc.includes('Args:\n'))
    return doc.replace('Args:\n', `Args:\n${line}\n`);
  if (doc.includes('Returns:'))
    return doc.replace('Returns:', `Args:\n${line}\n\nReturns:`);
  return `${doc}\n\nArgs:\n${line}`;
}

function variantTool(server, tool, index, kind, variant, templates) {
  const name = variant.names[index];
  let doc = tool.doc;
  let params = tool.params;
  if (kind.startsWith('preference_manipulation'))
    doc = templates.bestTool + doc;
  if (variant.parameter !== undefined) {
    params = [[variant.parameter, 'string'], ...params];
    if (variant.documented)
      doc = documentParameter(doc, variant.parameter, templates.outOfScopeDoc);
  }
  return {
    server: server.target,
    kind,
    target: `${server.target}-${kind.replaceAll('_', '')}`,
    name,
    twin: tool.name,
    description: doc,
    inputSchema: inputSchema(name, params),
  };
}

function goalText(goal) {
  return goal.text.replace('{pid}', PID);
}

function shaped(shape, key, text) {
  if (shape === 'list') return JSON.stringify([{ [key]: text }], null, 2);
  if (shape === 'object') return JSON.stringify({ [key]: text }, null, 2);
  return text;
}

function resultSamples(data) {
  const samples = [];
  const shapes = ['text', 'list', 'object'];
  for (const goal of data.goals) {
    const text = goalText(goal);
    for (const shape of shapes) {
      samples.push({
        kind: 'false_error',
        id: `${goal.task}/${shape}`,
        text: shaped(shape, 'Error', data.templates.falseError + text),
      });
      samples.push({
        kind: 'simulated_user',
        id: `${goal.task}/${shape}`,
        text: shaped(shape, 'Response', data.templates.simulatedUser + text),
      });
    }
    for (const document of data.retrievalDocuments) {
      samples.push({
        kind: 'search_term_deception',
        id: `${path.basename(document.file, '.txt')}/${goal.task}`,
        text: document.text.replace('{attack_instruction}', text),
      });
    }
  }
  for (const server of data.servers) {
    const variant = server.variants.tool_transfer;
    variant.results.forEach((result, index) => {
      samples.push({
        kind: 'tool_transfer',
        id: `${server.target}/${variant.names[index]}`,
        text:
          typeof result === 'string' ? result : JSON.stringify(result, null, 2),
      });
    });
  }
  return samples;
}

/**
 * MSB expanded: `clean` (every clean tool), `attacked` (every attacked
 * definition, with its `kind` and clean `twin`), `results` (result-attack
 * samples with their `kind`), `resultTwins` (honest results: the retrieval
 * documents without their attack line) and `support` (the honest tools MSB's
 * goals name, for the shadowing rule).
 */
export function loadMsb() {
  const data = JSON.parse(
    readFileSync(path.join(here, 'servers.json'), 'utf8'),
  );
  const clean = [];
  const attacked = [];
  for (const server of data.servers) {
    for (const [index, tool] of server.tools.entries()) {
      const definition = {
        server: server.target,
        kind: 'clean',
        target: server.target,
        name: tool.name,
        twin: tool.name,
        description: tool.doc,
        inputSchema: inputSchema(tool.name, tool.params),
      };
      clean.push(definition);
      data.goals.forEach((goal) => {
        attacked.push({
          ...definition,
          kind: 'prompt_injection',
          target: `${server.target}-promptinjection`,
          id: goal.task,
          description: `${tool.doc}\n${data.templates.promptInjection.replace('{goal}', goalText(goal))}`,
        });
      });
      for (const [kind, variant] of Object.entries(server.variants)) {
        attacked.push(
          variantTool(server, tool, index, kind, variant, data.templates),
        );
      }
    }
  }
  const support = Object.entries(data.supportTools).flatMap(([target, names]) =>
    names.map((name) => ({ target, name })),
  );
  const resultTwins = data.retrievalDocuments.map((document) => ({
    id: path.basename(document.file, '.txt'),
    text: document.text
      .split('\n')
      .filter((line) => !line.includes('{attack_instruction}'))
      .join('\n'),
  }));
  return {
    clean,
    attacked,
    results: resultSamples(data),
    resultTwins,
    support,
  };
}
