/**
 * Measuring and comparing assembled prompts: per-layer bytes, estimated
 * tokens and fingerprints, the share of each prompt that is frozen, and a
 * diff between two prompts. Token estimates need the optional peer
 * `js-tiktoken`, the unified diff the optional peer `diff`.
 */
import { assemblePrefixCachedPrompt, LAYER_NAMES } from './assemble.js';
import type * as Jsdiff from 'diff';
import type { AssembledPrefix, LayerName } from './assemble.js';
import { PROFILE_NAMES } from './profiles.js';
import type { ProfileName } from './profiles.js';
import { ROLE_NAMES } from './roles.js';
import type { RoleName } from './roles.js';
import { DIFF_PEER, requireOptionalPeer } from './optional-peer.js';
import { estimateTokens } from './tokens.js';

/** Size and fingerprint of one layer. */
export type LayerMeasurement = {
  /** Position of the layer, 1 to 4. */
  readonly index: 1 | 2 | 3 | 4;
  /** `shared-context`, `protocol`, `role` or `profile`. */
  readonly name: LayerName;
  /** True for layers 1 and 2. */
  readonly frozen: boolean;
  /** UTF-8 byte length of the layer. */
  readonly bytes: number;
  /** Estimated o200k_base tokens of the layer on its own. */
  readonly tokens: number;
  /** Lowercase hex SHA-256 of the layer's UTF-8 bytes. */
  readonly sha256: string;
};

/** Sizes of one assembled prompt. */
export type PromptMeasurement = {
  /** The role measured. */
  readonly role: RoleName;
  /** The profile rendered into layer 4. */
  readonly activeProfile: ProfileName;
  /** The four layers, in order. */
  readonly layers: readonly LayerMeasurement[];
  /** UTF-8 byte length of the whole prompt. */
  readonly totalBytes: number;
  /** Estimated o200k_base tokens of the whole prompt. */
  readonly totalTokens: number;
  /** Bytes of layers 1+2. */
  readonly frozenBytes: number;
  /** Estimated tokens of layers 1+2 together. */
  readonly frozenTokens: number;
  /** frozenBytes / totalBytes. */
  readonly frozenByteShare: number;
  /** frozenTokens / totalTokens. */
  readonly frozenTokenShare: number;
};

/** Measure one assembled prompt: bytes, estimated tokens and fingerprint of each layer, and the frozen share. */
export function measurePrompt(prompt: AssembledPrefix): PromptMeasurement {
  const layers = prompt.layers.map((layer): LayerMeasurement =>
    Object.freeze({
      index: layer.index,
      name: layer.name,
      frozen: layer.frozen,
      bytes: layer.byteLength,
      tokens: estimateTokens(layer.text),
      sha256: layer.sha256,
    }),
  );
  const totalBytes = prompt.cacheBreakpoints[2];
  const totalTokens = estimateTokens(prompt.systemPrompt);
  const frozenTokens = estimateTokens(
    prompt.layers[0].text + prompt.layers[1].text,
  );
  return Object.freeze({
    role: prompt.role,
    activeProfile: prompt.activeProfile,
    layers: Object.freeze(layers),
    totalBytes,
    totalTokens,
    frozenBytes: prompt.frozenPrefixBytes,
    frozenTokens,
    frozenByteShare: prompt.frozenPrefixBytes / totalBytes,
    frozenTokenShare: frozenTokens / totalTokens,
  });
}

/** The result of {@link measureWorkspace}. */
export type WorkspaceMeasurement = {
  /** Every role with `activeProfile`. */
  readonly roles: readonly PromptMeasurement[];
  /** Layer 4 of every profile. */
  readonly profiles: readonly {
    readonly profile: ProfileName;
    readonly bytes: number;
    readonly tokens: number;
  }[];
  /** SHA-256 of layers 1+2, the same for every role. */
  readonly frozenPrefixSha256: string;
};

/** Measure all six roles (with `activeProfile`, default `core`) and layer 4 of all five profiles. */
export function measureWorkspace({
  workspaceRoot,
  activeProfile = 'core',
}: {
  workspaceRoot: string;
  activeProfile?: string;
}): WorkspaceMeasurement {
  const prompts = ROLE_NAMES.map((role) =>
    assemblePrefixCachedPrompt({ role, workspaceRoot, activeProfile }),
  );
  const profiles = PROFILE_NAMES.map((profile) => {
    const layer = assemblePrefixCachedPrompt({
      role: ROLE_NAMES[0],
      workspaceRoot,
      activeProfile: profile,
    }).layers[3];
    return Object.freeze({
      profile,
      bytes: layer.byteLength,
      tokens: estimateTokens(layer.text),
    });
  });
  return Object.freeze({
    roles: Object.freeze(prompts.map(measurePrompt)),
    profiles: Object.freeze(profiles),
    frozenPrefixSha256: (prompts[0] as AssembledPrefix).frozenPrefixSha256,
  });
}

/** How two prompts differ, layer by layer. */
export type PromptDiff = {
  /** UTF-8 bytes the two prompts share from the start, ending on a code-point boundary. */
  readonly commonPrefixBytes: number;
  /** One entry per layer, in order. */
  readonly layers: readonly {
    /** Position of the layer, 1 to 4. */
    readonly index: 1 | 2 | 3 | 4;
    /** The layer's name. */
    readonly name: LayerName;
    /** True when both prompts have the same bytes in this layer. */
    readonly identical: boolean;
    /** SHA-256 of the layer in prompt `a`. */
    readonly sha256A: string;
    /** SHA-256 of the layer in prompt `b`. */
    readonly sha256B: string;
  }[];
  /** A unified line diff of the two prompts; empty when they are identical. */
  readonly unifiedDiff: string;
};

/**
 * Compare two assembled prompts: shared prefix bytes, which layers differ,
 * and a unified line diff. The diff needs the optional peer `diff`; without
 * it this throws a `PrefixError` with code `OPTIONAL_DEPENDENCY_MISSING`
 * (only when the prompts differ).
 */
export function diffPrompts({
  a,
  b,
}: {
  a: AssembledPrefix;
  b: AssembledPrefix;
}): PromptDiff {
  const bytesA = Buffer.from(a.systemPrompt, 'utf8');
  const bytesB = Buffer.from(b.systemPrompt, 'utf8');
  let common = 0;
  const limit = Math.min(bytesA.length, bytesB.length);
  while (common < limit && bytesA[common] === bytesB[common]) common += 1;
  // Back off to the start of a code point when the prompts part inside one.
  if (common < limit) {
    while (common > 0 && ((bytesA[common] as number) & 0xc0) === 0x80)
      common -= 1;
  }
  const layers = LAYER_NAMES.map((name, position) => {
    const layerA = a.layers[position as 0 | 1 | 2 | 3];
    const layerB = b.layers[position as 0 | 1 | 2 | 3];
    return Object.freeze({
      index: layerA.index,
      name,
      identical: layerA.sha256 === layerB.sha256,
      sha256A: layerA.sha256,
      sha256B: layerB.sha256,
    });
  });
  const unifiedDiff =
    a.systemPrompt === b.systemPrompt
      ? ''
      : requireOptionalPeer<typeof Jsdiff>(
          'diff',
          DIFF_PEER,
        ).createTwoFilesPatch(
          `${a.role} (${a.activeProfile})`,
          `${b.role} (${b.activeProfile})`,
          a.systemPrompt,
          b.systemPrompt,
          undefined,
          undefined,
          { context: 2 },
        );
  return Object.freeze({
    commonPrefixBytes: common,
    layers: Object.freeze(layers),
    unifiedDiff,
  });
}
