/**
 * The 4-layer invariant prefix. Every role's system prompt is built from:
 *
 * 1. the frozen shared context (`roles/shared/01-context.md`),
 * 2. the frozen tool and handoff protocol (`roles/shared/02-protocol.md`),
 * 3. the role's prompt (`roles/<role>.md`) and a rendering of its permissions,
 * 4. the active profile: the backends in scope.
 *
 * Layers 1+2 are byte-identical for every role and profile, layers 1-3 for
 * every profile of one role. Nothing volatile enters a layer: no path, date,
 * random id or environment-dependent text.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '@heretek/internal';
import {
  InvalidArgumentError,
  RoleFileError,
  PrefixErrorCode,
} from './errors.js';
import { normalizeSourceText } from './normalize.js';
import {
  backendsForProfile,
  parseProfileName,
  PROFILE_PURPOSES,
} from './profiles.js';
import type { ProfileName } from './profiles.js';
import { describeReadOnlyCommands } from './read-only-shell.js';
import { getRole, ROLE_NAMES, ROLES } from './roles.js';
import type { RoleName } from './roles.js';

/** Source of layer 1, relative to the workspace root. */
export const SHARED_CONTEXT_FILE = 'roles/shared/01-context.md';
/** Source of layer 2, relative to the workspace root. */
export const PROTOCOL_FILE = 'roles/shared/02-protocol.md';

/** The prompt source of `role`, relative to the workspace root. */
export function roleFileFor(role: RoleName): string {
  return `roles/${role}.md`;
}

/** Names of the four layers, in order. */
export const LAYER_NAMES = [
  'shared-context',
  'protocol',
  'role',
  'profile',
] as const;

/** A layer name. */
export type LayerName = (typeof LAYER_NAMES)[number];

/** One layer of an assembled prompt. */
export type PrefixLayer = {
  /** Position of the layer, 1 to 4. */
  readonly index: 1 | 2 | 3 | 4;
  /** `shared-context`, `protocol`, `role` or `profile`. */
  readonly name: LayerName;
  /** True for layers 1 and 2, which are identical for every role and profile. */
  readonly frozen: boolean;
  /** The layer's exact text, separators included; the layers concatenate to the prompt. */
  readonly text: string;
  /** Source files, relative to the workspace root (POSIX separators); empty when the layer is generated from data. */
  readonly sources: readonly string[];
  /** UTF-8 byte offset where the layer starts in the prompt. */
  readonly byteStart: number;
  /** UTF-8 byte offset just past the layer's end. */
  readonly byteEnd: number;
  /** UTF-8 byte length of the layer. */
  readonly byteLength: number;
  /** Lowercase hex SHA-256 of the layer's UTF-8 bytes. */
  readonly sha256: string;
};

/** The result of {@link assemblePrefixCachedPrompt}. */
export type AssembledPrefix = {
  /** The role the prompt was assembled for. */
  readonly role: RoleName;
  /** The profile rendered into layer 4. */
  readonly activeProfile: ProfileName;
  /** The whole system prompt: the four layers concatenated. */
  readonly systemPrompt: string;
  /** UTF-8 byte length of layers 1+2, identical for every role and profile. */
  readonly frozenPrefixBytes: number;
  /**
   * UTF-8 byte offsets where provider cache breakpoints go: the end of layer
   * 2, of layer 3 and of layer 4. Strictly increasing; the last equals the
   * prompt's byte length.
   */
  readonly cacheBreakpoints: readonly [number, number, number];
  /** The four layers, in order. */
  readonly layers: readonly [
    PrefixLayer,
    PrefixLayer,
    PrefixLayer,
    PrefixLayer,
  ];
  /** SHA-256 of layers 1+2: changes only when the frozen prefix drifts. */
  readonly frozenPrefixSha256: string;
  /** SHA-256 of the whole prompt. */
  readonly systemPromptSha256: string;
};

/**
 * A role prompt cut where the frozen prefix ends, as an editor sends it:
 * `frozen` (layers 1+2, the same bytes for every role and profile) as a
 * cache entry of its own, then `rest` (layers 3+4, the role and its
 * profile). `frozen + rest` is the whole prompt.
 */
export function splitAtFrozenPrefix(prompt: AssembledPrefix): {
  frozen: string;
  rest: string;
} {
  const [layer1, layer2, layer3, layer4] = prompt.layers;
  return { frozen: layer1.text + layer2.text, rest: layer3.text + layer4.text };
}

/** Options of {@link assemblePrefixCachedPrompt}. */
export type AssemblePrefixOptions = {
  /** One of the six roles; anything else throws `UnknownRoleError`. */
  readonly role: string;
  /** The folder that contains `roles/`. Its path never appears in the prompt. */
  readonly workspaceRoot: string;
  /** One of the five profiles; anything else throws `UnknownProfileError`. */
  readonly activeProfile: string;
};

const LAYER_SEPARATOR = '\n\n';

function readSource(workspaceRoot: string, file: string): string {
  const path = join(workspaceRoot, ...file.split('/'));
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new RoleFileError({
      code:
        code === 'ENOENT' || code === 'ENOTDIR'
          ? 'ROLE_FILE_MISSING'
          : 'ROLE_FILE_UNREADABLE',
      file,
      path,
      cause: error,
    });
  }
  const text = normalizeSourceText(raw);
  if (text.trim() === '')
    throw new RoleFileError({
      code: PrefixErrorCode.RoleFileEmpty,
      file,
      path,
    });
  return text;
}

/**
 * The permissions part of layer 3, rendered from the role table. Same input,
 * same bytes.
 */
export function renderPermissions(role: RoleName): string {
  const definition = getRole(role);
  const writers = ROLE_NAMES.filter((name) => !ROLES[name].readOnly).join(', ');
  const readOnlyRoles = ROLE_NAMES.filter((name) => ROLES[name].readOnly).join(
    ' or ',
  );
  const lines = [
    '## Your permissions',
    '',
    `- Role: ${definition.name} (${definition.readOnly ? 'read-only' : 'may change things'}).`,
  ];
  if (definition.permissions.canCallMutatingTools) {
    lines.push(
      '- Tools: read-only and mutating tools. Mutating ones change files, devices or systems: use them only for your task, and only on its targets.',
    );
  } else {
    lines.push(
      '- Tools: read-only tools only. The broker refuses every mutating tool for your role, and a tool not marked read-only counts as mutating.',
      "- Your harness's own tools: reading, searching and handing work over. Writing, editing or patching files is refused before it runs, as is any tool not known to only read.",
      `- Shell: read-only commands only: ${describeReadOnlyCommands()}. No redirection but to /dev/null or 2>&1, no \`$\`, backquotes, subshells or background jobs. Tests and builds run project code: hand them to a writer role. Where the shell is closed to your role, the refusal says so.`,
    );
  }
  if (definition.permissions.canReceiveMutatingWork) {
    lines.push('- Handoffs: you may receive mutating work.');
  } else {
    lines.push(
      '- Handoffs: you never receive mutating work; envelopes that ask you for it are refused.',
    );
  }
  lines.push(
    `- Mutating work goes only to: ${writers}; never to ${readOnlyRoles}.`,
  );
  return lines.join('\n');
}

/**
 * Layer 4 for `profile`, rendered from the backend table. Same input, same
 * bytes.
 */
export function renderProfile(profile: ProfileName): string {
  const lines = [
    `# Active profile: ${profile}`,
    '',
    `Scope: ${PROFILE_PURPOSES[profile]} Tool search covers these backends (targets):`,
    '',
  ];
  for (const entry of backendsForProfile(profile)) {
    lines.push(
      `- \`${entry.target}\` (${entry.backend}, profile ${entry.profile})`,
    );
  }
  lines.push(
    '',
    'Tools of other backends are out of scope for this session. If the task needs one, report which capability is missing; the director decides whether to switch profile.',
  );
  return lines.join('\n');
}

function buildLayers(
  parts: readonly {
    name: LayerName;
    text: string;
    sources: readonly string[];
  }[],
): PrefixLayer[] {
  let offset = 0;
  return parts.map((part, position) => {
    const byteLength = Buffer.byteLength(part.text, 'utf8');
    const layer: PrefixLayer = Object.freeze({
      index: (position + 1) as 1 | 2 | 3 | 4,
      name: part.name,
      frozen: position < 2,
      text: part.text,
      sources: Object.freeze([...part.sources]),
      byteStart: offset,
      byteEnd: offset + byteLength,
      byteLength,
      sha256: sha256Hex(part.text),
    });
    offset += byteLength;
    return layer;
  });
}

/**
 * Build a role's system prompt from the four layers, with the byte offsets
 * where cache breakpoints go and a SHA-256 fingerprint per layer.
 *
 * Throws `UnknownRoleError`, `UnknownProfileError`, `RoleFileError` (code
 * `ROLE_FILE_MISSING`, `ROLE_FILE_EMPTY` or `ROLE_FILE_UNREADABLE`, naming
 * the file) or `InvalidArgumentError`.
 *
 * @example
 * const prompt = assemblePrefixCachedPrompt({ role: 'staff-backend', workspaceRoot: process.cwd(), activeProfile: 'android' });
 * Buffer.from(prompt.systemPrompt).subarray(0, prompt.frozenPrefixBytes); // same bytes for all six roles
 */
export function assemblePrefixCachedPrompt({
  role,
  workspaceRoot,
  activeProfile,
}: AssemblePrefixOptions): AssembledPrefix {
  const roleDefinition = getRole(role);
  const profile = parseProfileName(activeProfile);
  if (typeof workspaceRoot !== 'string' || workspaceRoot === '') {
    throw new InvalidArgumentError({
      argument: 'workspaceRoot',
      message:
        'workspaceRoot must be the path of the folder that contains roles/.',
    });
  }
  const roleFile = roleFileFor(roleDefinition.name);
  const layers = buildLayers([
    {
      name: 'shared-context',
      text: readSource(workspaceRoot, SHARED_CONTEXT_FILE) + LAYER_SEPARATOR,
      sources: [SHARED_CONTEXT_FILE],
    },
    {
      name: 'protocol',
      text: readSource(workspaceRoot, PROTOCOL_FILE) + LAYER_SEPARATOR,
      sources: [PROTOCOL_FILE],
    },
    {
      name: 'role',
      text:
        readSource(workspaceRoot, roleFile) +
        LAYER_SEPARATOR +
        renderPermissions(roleDefinition.name) +
        LAYER_SEPARATOR,
      sources: [roleFile],
    },
    { name: 'profile', text: `${renderProfile(profile)}\n`, sources: [] },
  ]) as [PrefixLayer, PrefixLayer, PrefixLayer, PrefixLayer];
  const systemPrompt = layers.map((layer) => layer.text).join('');
  const frozenPrefix = layers[0].text + layers[1].text;
  return Object.freeze({
    role: roleDefinition.name,
    activeProfile: profile,
    systemPrompt,
    frozenPrefixBytes: layers[1].byteEnd,
    cacheBreakpoints: Object.freeze([
      layers[1].byteEnd,
      layers[2].byteEnd,
      layers[3].byteEnd,
    ]) as readonly [number, number, number],
    layers: Object.freeze(layers) as AssembledPrefix['layers'],
    frozenPrefixSha256: sha256Hex(frozenPrefix),
    systemPromptSha256: sha256Hex(systemPrompt),
  });
}
