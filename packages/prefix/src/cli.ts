#!/usr/bin/env node
/**
 * heretek-prefix: print a role's system prompt, its layer table, a diff of
 * two roles, the measurements of all roles, or provider-ready request parts.
 * Results go to stdout, diagnostics to stderr; exit 1 on an error, 2 on a
 * usage error.
 */
import { parseArgs } from 'node:util';
import { UsageError, isUsageError } from '@heretek/internal';
import { toAnthropicSystem, toOpenAIPromptCache } from './adapters.js';
import { assemblePrefixCachedPrompt } from './assemble.js';
import { MINIMUM_CACHEABLE_TOKENS } from './cache-minimums.js';
import { diffPrompts, measurePrompt, measureWorkspace } from './compare.js';
import type { PromptMeasurement, WorkspaceMeasurement } from './compare.js';
import { PrefixError } from './errors.js';
import { VERSION } from './version.js';

const USAGE = `Usage: heretek-prefix <command> [options]

Commands:
  print <role>              print the role's system prompt
  layers <role>             table of the four layers: bytes, estimated tokens, SHA-256
  diff <roleA> <roleB>      which layers differ, shared prefix bytes, unified diff
  report                    bytes, tokens and frozen share of all six roles, and
                            which models cache the frozen prefix and each prompt
  anthropic <role>          Anthropic system blocks with cache_control (JSON)
  openai <role>             OpenAI instructions and prompt_cache_key (JSON)
  minimums                  documented minimum cacheable lengths per provider

Options:
  --root <dir>              folder that contains roles/ (default: current directory)
  --profile <name>          active profile: core, appsec, android, game, research (default: core)
  --profile-b <name>        profile of the second role in diff (default: --profile)
  --model <id>              model id for anthropic/openai (selects the cache minimum)
  --json                    machine-readable output for layers and report
  -h, --help                this help
  -v, --version             the version
`;

function write(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

function pad(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, index) => cell.padEnd(widths[index] ?? 0))
    .join('  ')
    .trimEnd();
}

function layerTable(
  measurement: PromptMeasurement,
  breakpoints: readonly number[],
  frozenSha: string,
): string {
  const header = ['layer', 'name', 'bytes', 'tokens', 'sha256'];
  const rows = measurement.layers.map((layer) => [
    String(layer.index),
    layer.name,
    String(layer.bytes),
    String(layer.tokens),
    layer.sha256,
  ]);
  rows.push([
    '1+2',
    'frozen',
    String(measurement.frozenBytes),
    String(measurement.frozenTokens),
    frozenSha,
  ]);
  rows.push([
    'all',
    'prompt',
    String(measurement.totalBytes),
    String(measurement.totalTokens),
    '',
  ]);
  const widths = header.map((_, column) =>
    Math.max(...[header, ...rows].map((row) => (row[column] ?? '').length)),
  );
  return [
    `role ${measurement.role}, profile ${measurement.activeProfile}`,
    pad(header, widths),
    ...rows.map((row) => pad(row, widths)),
    `frozen share: ${percent(measurement.frozenByteShare)} of bytes, ${percent(measurement.frozenTokenShare)} of tokens (o200k_base estimate)`,
    `cache breakpoints (UTF-8 byte offsets): ${breakpoints.join(' ')}`,
  ].join('\n');
}

type CacheabilityRow = {
  provider: string;
  models: readonly string[];
  minimumTokens: number;
  /** Layers 1+2 reach the minimum on their own. */
  frozenPrefixCached: boolean;
  /** Roles whose whole prompt (with the report's profile) reaches the minimum. */
  wholePromptCachedRoles: number;
};

/** For every row of the minimums table: does the frozen prefix, does each whole prompt reach it? */
function cacheability(report: WorkspaceMeasurement): CacheabilityRow[] {
  const [first] = report.roles;
  const frozenTokens = first?.frozenTokens ?? 0;
  return MINIMUM_CACHEABLE_TOKENS.map((entry) => ({
    provider: entry.provider,
    models: entry.models,
    minimumTokens: entry.minimumTokens,
    frozenPrefixCached: frozenTokens >= entry.minimumTokens,
    wholePromptCachedRoles: report.roles.filter(
      (role) => role.totalTokens >= entry.minimumTokens,
    ).length,
  }));
}

function cacheabilityTable(
  rows: readonly CacheabilityRow[],
  roleCount: number,
  profile: string,
): string[] {
  const roles = (count: number) =>
    count === roleCount
      ? `all ${roleCount} roles`
      : count === 0
        ? 'no role'
        : `${count} of ${roleCount} roles`;
  return [
    `| provider | models | minimum tokens | layers 1+2 cached | whole prompt cached (profile ${profile}) |`,
    '|---|---|---:|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.provider} | ${row.models.map((model) => (model !== '*' ? model : rows.filter((other) => other.provider === row.provider).length === 1 ? 'all models' : 'other models')).join(', ')} | ${row.minimumTokens} | ${row.frozenPrefixCached ? 'yes' : 'no'} | ${roles(row.wholePromptCachedRoles)} |`,
    ),
    '',
    'Token counts are o200k_base estimates of the system prompt alone: exact for OpenAI, approximate for Anthropic and Gemini; tools placed before the system prompt make the cached prefix longer.',
  ];
}

/** Provider request parts as JSON on stdout, cache warnings on stderr. */
function printRequest(
  warnings: readonly { message: string }[],
  body: object,
): number {
  for (const warning of warnings)
    process.stderr.write(`warning: ${warning.message}\n`);
  write(JSON.stringify(body, null, 2));
  return 0;
}

function requireArgs(
  positionals: readonly string[],
  count: number,
  what: string,
): string[] {
  if (positionals.length !== count) throw new UsageError(`expected ${what}`);
  return [...positionals];
}

const OPTIONS = {
  root: { type: 'string' },
  profile: { type: 'string' },
  'profile-b': { type: 'string' },
  model: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
} as const;

/** What every command gets: the parsed options and its own arguments. */
type Invocation = {
  command: string;
  /** The positionals after the command. */
  rest: readonly string[];
  values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  workspaceRoot: string;
  activeProfile: string;
};

function assemble(invocation: Invocation, role: string, profile?: string) {
  return assemblePrefixCachedPrompt({
    role,
    workspaceRoot: invocation.workspaceRoot,
    activeProfile: profile ?? invocation.activeProfile,
  });
}

function requireModel(invocation: Invocation): string {
  if (invocation.values.model === undefined)
    throw new UsageError(`${invocation.command} needs --model <id>`);
  return invocation.values.model;
}

function printCommand(invocation: Invocation): number {
  const [role] = requireArgs(invocation.rest, 1, 'print <role>');
  process.stdout.write(assemble(invocation, role as string).systemPrompt);
  return 0;
}

function layersCommand(invocation: Invocation): number {
  const [role] = requireArgs(invocation.rest, 1, 'layers <role>');
  const prompt = assemble(invocation, role as string);
  const measurement = measurePrompt(prompt);
  if (invocation.values.json) {
    write(
      JSON.stringify(
        {
          ...measurement,
          cacheBreakpoints: prompt.cacheBreakpoints,
          frozenPrefixSha256: prompt.frozenPrefixSha256,
          systemPromptSha256: prompt.systemPromptSha256,
        },
        null,
        2,
      ),
    );
  } else {
    write(
      layerTable(
        measurement,
        prompt.cacheBreakpoints,
        prompt.frozenPrefixSha256,
      ),
    );
  }
  return 0;
}

function diffCommand(invocation: Invocation): number {
  const [roleA, roleB] = requireArgs(
    invocation.rest,
    2,
    'diff <roleA> <roleB>',
  );
  const a = assemble(invocation, roleA as string);
  const b = assemble(
    invocation,
    roleB as string,
    invocation.values['profile-b'],
  );
  const result = diffPrompts({ a, b });
  const lines = [
    `${a.role} (${a.activeProfile}) vs ${b.role} (${b.activeProfile})`,
    `shared prefix: ${result.commonPrefixBytes} bytes`,
    ...result.layers.map(
      (layer) =>
        `layer ${layer.index} ${layer.name}: ${layer.identical ? `identical ${layer.sha256A}` : `differs ${layer.sha256A} ${layer.sha256B}`}`,
    ),
  ];
  write(lines.join('\n'));
  if (result.unifiedDiff !== '') write(result.unifiedDiff);
  return 0;
}

function reportCommand(invocation: Invocation): number {
  requireArgs(invocation.rest, 0, 'report without arguments');
  const { workspaceRoot, activeProfile } = invocation;
  const report = measureWorkspace({ workspaceRoot, activeProfile });
  const rows = cacheability(report);
  if (invocation.values.json) {
    write(JSON.stringify({ ...report, cacheability: rows }, null, 2));
    return 0;
  }
  const [first] = report.roles;
  const lines = [
    `Frozen prefix (layers 1+2, identical for every role and profile): ${first?.frozenBytes} bytes, ${first?.frozenTokens} tokens, sha256 ${report.frozenPrefixSha256}`,
    ...(first?.layers
      .slice(0, 2)
      .map(
        (layer) =>
          `  layer ${layer.index} ${layer.name}: ${layer.bytes} bytes, ${layer.tokens} tokens`,
      ) ?? []),
    '',
    `| role (profile ${activeProfile}) | layer 3 bytes | layer 3 tokens | layer 4 bytes | layer 4 tokens | prompt bytes | prompt tokens | frozen share (bytes) | frozen share (tokens) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...report.roles.map((role) => {
      const layer3 = role.layers[2];
      const layer4 = role.layers[3];
      return `| ${role.role} | ${layer3?.bytes} | ${layer3?.tokens} | ${layer4?.bytes} | ${layer4?.tokens} | ${role.totalBytes} | ${role.totalTokens} | ${percent(role.frozenByteShare)} | ${percent(role.frozenTokenShare)} |`;
    }),
    '',
    '| profile | layer 4 bytes | layer 4 tokens |',
    '|---|---:|---:|',
    ...report.profiles.map(
      (profile) =>
        `| ${profile.profile} | ${profile.bytes} | ${profile.tokens} |`,
    ),
    '',
    ...cacheabilityTable(rows, report.roles.length, activeProfile),
  ];
  write(lines.join('\n'));
  return 0;
}

/** A command that prints a provider's request parts for a role's prompt. */
function requestCommand(
  parts: (
    prompt: ReturnType<typeof assemble>,
    model: string,
  ) => { warnings: readonly { message: string }[]; body: object },
): (invocation: Invocation) => number {
  return (invocation) => {
    const [role] = requireArgs(
      invocation.rest,
      1,
      `${invocation.command} <role>`,
    );
    const prompt = assemble(invocation, role as string);
    const { warnings, body } = parts(prompt, requireModel(invocation));
    return printRequest(warnings, body);
  };
}

const anthropicCommand = requestCommand((prompt, model) => {
  const { warnings, system, remainingBreakpoints } = toAnthropicSystem({
    prompt,
    model,
  });
  return { warnings, body: { system, remainingBreakpoints } };
});

const openaiCommand = requestCommand((prompt, model) => {
  const { warnings, instructions, promptCacheKey } = toOpenAIPromptCache({
    prompt,
    model,
  });
  return { warnings, body: { instructions, prompt_cache_key: promptCacheKey } };
});

function minimumsCommand(invocation: Invocation): number {
  requireArgs(invocation.rest, 0, 'minimums without arguments');
  const lines = [
    '| provider | models | minimum tokens | source |',
    '|---|---|---:|---|',
  ];
  for (const entry of MINIMUM_CACHEABLE_TOKENS) {
    lines.push(
      `| ${entry.provider} | ${entry.models.join(', ')} | ${entry.minimumTokens} | ${entry.source} |`,
    );
  }
  write(lines.join('\n'));
  return 0;
}

/** Each command, by name. */
const COMMANDS: Readonly<Record<string, (invocation: Invocation) => number>> = {
  print: printCommand,
  layers: layersCommand,
  diff: diffCommand,
  report: reportCommand,
  anthropic: anthropicCommand,
  openai: openaiCommand,
  minimums: minimumsCommand,
};

function run(argv: readonly string[]): number {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: OPTIONS,
  });
  if (values.help) {
    write(USAGE);
    return 0;
  }
  if (values.version) {
    write(VERSION);
    return 0;
  }
  const [command, ...rest] = positionals;
  if (command === undefined) throw new UsageError('missing command');
  const handler = Object.hasOwn(COMMANDS, command)
    ? COMMANDS[command]
    : undefined;
  if (handler === undefined)
    throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  return handler({
    command,
    rest,
    values,
    workspaceRoot: values.root ?? process.cwd(),
    activeProfile: values.profile ?? 'core',
  });
}

function main(): void {
  try {
    process.exitCode = run(process.argv.slice(2));
  } catch (error) {
    if (isUsageError(error)) {
      process.stderr.write(
        `heretek-prefix: ${(error as Error).message}\n\n${USAGE}`,
      );
      process.exitCode = 2;
    } else if (PrefixError.isInstance(error)) {
      process.stderr.write(`heretek-prefix: ${error.code}: ${error.message}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(
        `heretek-prefix: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = 1;
    }
  }
}

main();
