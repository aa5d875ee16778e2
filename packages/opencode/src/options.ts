import { PROFILE_NAMES } from '@heretek/prefix';
import { z } from 'zod';

/** The plugin's options after checking: the profile of layer 4 and the broker's environment. */
export type HeretekOptions = {
  /** The active profile rendered into every role's layer 4. */
  profile: string;
  /** OpenCode's environment with the plugin's `env` option over it; the broker reads its `HERETEK_*` variables from here. */
  env: NodeJS.ProcessEnv;
};

const optionsSchema = z
  .object({
    profile: z.enum(PROFILE_NAMES, {
      error: `profile must be one of ${PROFILE_NAMES.join(', ')}`,
    }),
    env: z.record(
      z
        .string()
        .regex(
          /^HERETEK_[A-Z_]+$/,
          'env holds HERETEK_* variables only, e.g. { "HERETEK_GATEWAY_URL": "http://127.0.0.1:3000" }',
        ),
      z.string({ error: 'env values must be strings' }),
    ),
  })
  .partial()
  .strict();

/**
 * The plugin's options as written in `opencode.json`:
 * `["@heretek/opencode", { "profile": "android", "env": { ... } }]`.
 */
export type HeretekPluginOptions = {
  /** Profile rendered into layer 4 of every role prompt (`core`, `appsec`, `android`, `game`, `research`); default `HERETEK_BROKER_PROFILE`, else `core`. */
  profile?: string;
  /** `HERETEK_*` variables laid over OpenCode's environment for the broker. */
  env?: Record<string, string>;
};

/**
 * Reads the plugin's options (`["@heretek/opencode", { profile, env }]` in
 * `opencode.json`) over OpenCode's environment. Throws one error naming
 * every problem; `fallback` gives the environment alone instead.
 */
export function parsePluginOptions(
  raw: unknown,
  env: NodeJS.ProcessEnv,
  fallback: { lenient?: boolean } = {},
): HeretekOptions {
  const parsed = optionsSchema.safeParse(fallback.lenient ? {} : (raw ?? {}));
  if (!parsed.success) {
    throw new Error(
      `@heretek/opencode options: ${parsed.error.issues
        .map(
          (issue) =>
            `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`,
        )
        .join('; ')}. The options are ignored; the environment alone applies.`,
    );
  }
  const merged = { ...env, ...parsed.data.env };
  return {
    profile:
      parsed.data.profile ??
      (merged.HERETEK_BROKER_PROFILE === undefined ||
      merged.HERETEK_BROKER_PROFILE === ''
        ? 'core'
        : merged.HERETEK_BROKER_PROFILE),
    env: merged,
  };
}
