import { checkEmbeddingsUrl } from '@heretek/catalog';
import { GATEWAY_MODES, PROFILE_NAMES } from '@heretek/internal';
import { ROLE_NAMES } from '@heretek/prefix';
import path from 'node:path';
import { z } from 'zod';
import { BrokerConfigError } from './errors.js';
import { PIN_POLICIES } from './trust/pin-policy.js';
import { heretekStateDir } from './trust/state-dir.js';

export { BrokerConfigError };

/**
 * Broker configuration, read from the environment (see {@link loadBrokerConfig});
 * each field is one variable's checked value, described by its `--help` line in
 * `ENVIRONMENT`, and `embeddings` the endpoint of hybrid ranking, if any.
 */
export type BrokerConfig = ReturnType<typeof loadBrokerConfig>;

/** A whole number between 1 and `max`; `example` completes its message. */
const wholeNumber = (name: string, max: number, example: string) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number${example}`)
    .transform(Number)
    .refine(
      (value) => value >= 1 && value <= max,
      `${name} must be between 1 and ${max}`,
    );

const positiveInteger = (name: string, max: number) =>
  wholeNumber(name, max, ' of milliseconds, e.g. 30000');

/** A secret sent as a bearer token: set means non-empty and without whitespace. */
const secret = (name: string, what: string) =>
  z
    .string()
    .min(1, `${name} is set but empty: unset it or give the ${what}`)
    .refine((value) => !/\s/.test(value), `${name} must not contain whitespace`)
    .optional();

/** A path that is optional, but not empty once set. */
const optionalPath = (name: string) =>
  z.string().min(1, `${name} is set but empty`).optional();

/** A 1/0 switch; unset means off. */
const flag = (name: string) =>
  z
    .enum(['0', '1', 'true', 'false'], {
      error: `${name} must be 1 or 0 (true or false)`,
    })
    .optional()
    .transform((value) => value === '1' || value === 'true');

/** Default of `HERETEK_GATEWAY_MAX_STREAMS`: standalone streams held open at most. */
const DEFAULT_MAX_STREAMS = 100;

/** A variable's value when it is unset: a literal value, or a file in the state directory. */
type Fallback =
  string | { shown: string; value: (env: NodeJS.ProcessEnv) => string };

/** One environment variable: how its value is checked, its value when unset, and its line in `--help`. */
type Variable<S extends z.ZodType> = {
  schema: S;
  /** Unset: the variable stays undefined and the schema decides (off, none). */
  fallback?: Fallback;
  help: string;
};

const variable = <S extends z.ZodType>(definition: Variable<S>): Variable<S> =>
  definition;

/** A file in the broker's state directory (`$XDG_STATE_HOME/heretek`). */
const stateFile = (name: string): Fallback => ({
  shown: `$XDG_STATE_HOME/heretek/${name}`,
  value: (env) => path.join(heretekStateDir({ env }), name),
});

/** Every environment variable the broker reads, in `--help` order: the configuration and the help text both come from here. */
const ENVIRONMENT = {
  // The URL rules (http(s), no credentials, no trailing /mcp) are the gateway
  // client's: createGateway checks them with its option schema when the
  // broker goes online, so an offline broker never loads the client.
  HERETEK_GATEWAY_URL: variable({
    schema: z.string().transform((url) => url.replace(/\/+$/, '')),
    fallback: 'http://127.0.0.1:3000',
    help: 'agentgateway base URL',
  }),
  HERETEK_GATEWAY_MODE: variable({
    schema: z.enum(GATEWAY_MODES, {
      error: `HERETEK_GATEWAY_MODE must be ${GATEWAY_MODES.join(' or ')}`,
    }),
    fallback: 'per-target',
    help: 'per-target (/mcp/<target>) or multiplexed (/mcp)',
  }),
  HERETEK_GATEWAY_TOKEN: variable({
    schema: secret('HERETEK_GATEWAY_TOKEN', 'token'),
    help: 'sent as Authorization: Bearer <token>',
  }),
  HERETEK_GATEWAY_TIMEOUT_MS: variable({
    schema: positiveInteger('HERETEK_GATEWAY_TIMEOUT_MS', 3_600_000),
    fallback: '30000',
    help: 'per-request timeout',
  }),
  HERETEK_GATEWAY_MAX_STREAMS: variable({
    schema: wholeNumber('HERETEK_GATEWAY_MAX_STREAMS', 100_000, ', e.g. 100'),
    fallback: String(DEFAULT_MAX_STREAMS),
    help: 'most backends whose tool list changes are pushed (one stream each); the rest are re-listed on the TTL or when a name is missing',
  }),
  HERETEK_BROKER_ROLE: variable({
    schema: z.enum(ROLE_NAMES, {
      error: `HERETEK_BROKER_ROLE must be one of ${ROLE_NAMES.join(', ')}`,
    }),
    fallback: 'director',
    help: `caller role (${ROLE_NAMES.join(', ')}); default is read-only`,
  }),
  HERETEK_HOOK_ROLES_DIR: variable({
    schema: optionalPath('HERETEK_HOOK_ROLES_DIR'),
    help: "folder of the Claude Code plugin's per-call role records: each mcp_call_tool takes its role from there, and is refused without one",
  }),
  HERETEK_DISCOVERY_TTL_MS: variable({
    schema: positiveInteger('HERETEK_DISCOVERY_TTL_MS', 86_400_000),
    fallback: '300000',
    help: 're-run discovery on the next search after this long',
  }),
  HERETEK_BROKER_OFFLINE: variable({
    schema: flag('HERETEK_BROKER_OFFLINE'),
    help: '1 = never contact the gateway; serve the offline seed catalog',
  }),
  HERETEK_BROKER_PROFILE: variable({
    schema: z
      .enum(PROFILE_NAMES, {
        error: `HERETEK_BROKER_PROFILE must be one of ${PROFILE_NAMES.join(', ')}`,
      })
      .optional(),
    help: `default search profile (${PROFILE_NAMES.join(', ')})`,
  }),
  HERETEK_BACKENDS_FILE: variable({
    schema: optionalPath('HERETEK_BACKENDS_FILE'),
    help: 'JSON backend table [{backend,target,profile}] replacing the 12 defaults',
  }),
  HERETEK_SKILLS_ROOT: variable({
    schema: optionalPath('HERETEK_SKILLS_ROOT'),
    help: 'workspace root whose lock-verified skills are served (MCP skills extension)',
  }),
  HERETEK_PINS_FILE: variable({
    schema: z.string(),
    fallback: stateFile('pins.json'),
    help: 'pinned tool definitions (trust on first use; --pin accepts changes)',
  }),
  HERETEK_PIN_POLICY: variable({
    schema: z.enum(PIN_POLICIES, {
      error: `HERETEK_PIN_POLICY must be one of ${PIN_POLICIES.join(', ')}`,
    }),
    fallback: 'refuse',
    help: 'refuse (a changed mutating tool cannot be called), warn, or off',
  }),
  HERETEK_PINS_READ_ONLY: variable({
    schema: flag('HERETEK_PINS_READ_ONLY'),
    help: '1 = never write the pins file on its own (a committed lock)',
  }),
  HERETEK_RESULT_GUARD: variable({
    schema: z
      .enum(['on', 'off'], {
        error:
          'HERETEK_RESULT_GUARD must be on or off: unset it to clean and flag tool results, or set it to off to pass them untouched',
      })
      .transform((value) => value === 'on'),
    fallback: 'on',
    help: 'on: remove hidden characters from tool results and flag instruction-like text; off: results untouched',
  }),
  HERETEK_USAGE_FILE: variable({
    schema: z.string(),
    fallback: stateFile('usage.jsonl'),
    help: 'learned search-then-call uses (JSONL); off disables learning',
  }),
  HERETEK_INDEX_CACHE_FILE: variable({
    schema: z.string(),
    fallback: stateFile('index-cache.bin'),
    help: "each backend's last listing, served at once after a restart; off disables it",
  }),
  HERETEK_EMBEDDINGS_URL: variable({
    schema: z
      .string()
      .transform((url, context) => {
        try {
          return checkEmbeddingsUrl(url, 'HERETEK_EMBEDDINGS_URL');
        } catch (error) {
          context.addIssue({
            code: 'custom',
            message: (error as Error).message,
          });
          return z.NEVER;
        }
      })
      .optional(),
    help: 'OpenAI-compatible embeddings base URL (/embeddings is appended): hybrid ranking on',
  }),
  HERETEK_EMBEDDINGS_MODEL: variable({
    schema: z.string().optional(),
    help: 'the embedding model (required with HERETEK_EMBEDDINGS_URL)',
  }),
  HERETEK_EMBEDDINGS_KEY: variable({
    schema: secret('HERETEK_EMBEDDINGS_KEY', 'key'),
    help: 'sent to the embeddings endpoint as Authorization: Bearer <key>',
  }),
  HERETEK_EMBEDDINGS_WEIGHT: variable({
    schema: z
      .string()
      .regex(
        /^(0(\.\d+)?|1(\.0+)?)$/,
        'HERETEK_EMBEDDINGS_WEIGHT must be a number from 0 to 1, e.g. 0.3',
      )
      .transform(Number),
    fallback: '0.3',
    help: 'share of the vector side in the fused score (0 = lexical order)',
  }),
  HERETEK_EMBEDDINGS_TIMEOUT_MS: variable({
    schema: positiveInteger('HERETEK_EMBEDDINGS_TIMEOUT_MS', 60_000),
    fallback: '1000',
    help: "the longest a search waits for its query's vector before answering lexically (less once the endpoint's latency is known)",
  }),
  HERETEK_EMBEDDINGS_CACHE_FILE: variable({
    schema: z.string(),
    fallback: stateFile('embeddings.json'),
    help: 'tool vectors by model and definition hash; off disables it',
  }),
};

type Environment = typeof ENVIRONMENT;
type Name = keyof Environment;
const NAMES = Object.keys(ENVIRONMENT) as Name[];

const environmentSchema = z.object(
  Object.fromEntries(NAMES.map((name) => [name, ENVIRONMENT[name].schema])) as {
    [K in Name]: Environment[K]['schema'];
  },
);

/** The `Environment:` lines of `--help`: each variable, what it does, and its value when unset. */
export function environmentHelp(): string[] {
  return NAMES.map((name) => {
    const { fallback, help } = ENVIRONMENT[name] as Variable<z.ZodType>;
    const shown =
      fallback === undefined
        ? 'unset'
        : typeof fallback === 'string'
          ? fallback
          : fallback.shown;
    return `  ${name.padEnd(28)} ${help} (default: ${shown})`;
  });
}

/** Reads the broker configuration from an environment: unset or empty variables take their defaults, any other bad value throws {@link BrokerConfigError} naming the variable. */
export function loadBrokerConfig(
  env: NodeJS.ProcessEnv | Record<string, string | undefined>,
) {
  const relevant: Record<string, string> = {};
  for (const name of NAMES) {
    const value = env[name];
    // An empty token is a mistake worth naming; other empty variables mean "unset".
    if (
      value !== undefined &&
      (value !== '' ||
        name === 'HERETEK_GATEWAY_TOKEN' ||
        name === 'HERETEK_EMBEDDINGS_KEY')
    ) {
      relevant[name] = value;
      continue;
    }
    const { fallback } = ENVIRONMENT[name] as Variable<z.ZodType>;
    if (fallback !== undefined)
      relevant[name] =
        typeof fallback === 'string' ? fallback : fallback.value(env);
  }
  const parsed = environmentSchema.safeParse(relevant);
  if (!parsed.success)
    throw new BrokerConfigError(
      parsed.error.issues.map((issue) => {
        const variable = String(issue.path[0] ?? 'environment');
        return issue.message.startsWith(variable)
          ? issue.message
          : `${variable}: ${issue.message}`;
      }),
    );
  const variables = parsed.data;
  return {
    embeddings: embeddingsOf(variables),
    gatewayUrl: variables.HERETEK_GATEWAY_URL,
    gatewayMode: variables.HERETEK_GATEWAY_MODE,
    gatewayToken: variables.HERETEK_GATEWAY_TOKEN,
    gatewayTimeoutMs: variables.HERETEK_GATEWAY_TIMEOUT_MS,
    gatewayMaxStreams: variables.HERETEK_GATEWAY_MAX_STREAMS,
    role: variables.HERETEK_BROKER_ROLE,
    hookRolesDir: variables.HERETEK_HOOK_ROLES_DIR,
    discoveryTtlMs: variables.HERETEK_DISCOVERY_TTL_MS,
    offline: variables.HERETEK_BROKER_OFFLINE,
    defaultProfile: variables.HERETEK_BROKER_PROFILE,
    backendsFile: variables.HERETEK_BACKENDS_FILE,
    skillsRoot: variables.HERETEK_SKILLS_ROOT,
    pinsFile: variables.HERETEK_PINS_FILE,
    pinPolicy: variables.HERETEK_PIN_POLICY,
    pinsReadOnly: variables.HERETEK_PINS_READ_ONLY,
    resultGuard: variables.HERETEK_RESULT_GUARD,
    usageFile: variables.HERETEK_USAGE_FILE,
    indexCacheFile: variables.HERETEK_INDEX_CACHE_FILE,
  };
}

/**
 * The embeddings part of the configuration: both URL and model, or neither.
 * The URL is OpenAI-compatible, without a trailing slash (`/embeddings` is
 * appended); the key is never logged.
 */
function embeddingsOf(variables: z.infer<typeof environmentSchema>) {
  const url = variables.HERETEK_EMBEDDINGS_URL;
  const model = variables.HERETEK_EMBEDDINGS_MODEL?.trim();
  if (url === undefined) {
    if (model !== undefined || variables.HERETEK_EMBEDDINGS_KEY !== undefined)
      throw new BrokerConfigError([
        `HERETEK_EMBEDDINGS_URL: unset, but ${model === undefined ? 'HERETEK_EMBEDDINGS_KEY' : 'HERETEK_EMBEDDINGS_MODEL'} is set: give the endpoint's base URL (e.g. http://127.0.0.1:11434/v1) or unset both`,
      ]);
    return undefined;
  }
  if (model === undefined || model === '')
    throw new BrokerConfigError([
      'HERETEK_EMBEDDINGS_MODEL: required with HERETEK_EMBEDDINGS_URL: give the model the endpoint serves, e.g. nomic-embed-text',
    ]);
  return {
    url,
    model,
    key: variables.HERETEK_EMBEDDINGS_KEY,
    weight: variables.HERETEK_EMBEDDINGS_WEIGHT,
    queryTimeoutMs: variables.HERETEK_EMBEDDINGS_TIMEOUT_MS,
    cacheFile: variables.HERETEK_EMBEDDINGS_CACHE_FILE,
  };
}
