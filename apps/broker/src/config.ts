import { GATEWAY_MODES, type GatewayMode } from '@heretek/internal';
import { PROFILE_NAMES } from '@heretek/internal';
import { ROLE_NAMES } from '@heretek/prefix';
import path from 'node:path';
import { z } from 'zod';
import { BrokerConfigError } from './errors.js';
import type { PinPolicy } from './trust/pin-policy.js';
import { heretekStateDir } from './trust/state-dir.js';

export { BrokerConfigError };

/** Broker configuration, read from the environment (see {@link loadBrokerConfig}). */
export type BrokerConfig = {
  /** agentgateway base URL, without a trailing slash (checked by the gateway client's rules when online). */
  gatewayUrl: string;
  /** `per-target`: `<url>/mcp/<target>` with bare names; `multiplexed`: `<url>/mcp` with `<target>_<tool>`. */
  gatewayMode: GatewayMode;
  /** Bearer token for the gateway, if any. Never logged. */
  gatewayToken: string | undefined;
  /** Per-request timeout in milliseconds. */
  gatewayTimeoutMs: number;
  /** Caller role for the authorization gate; also sent as `x-heretek-role`. */
  role: (typeof ROLE_NAMES)[number];
  /** Re-run discovery on the next search once the catalog is older than this. */
  discoveryTtlMs: number;
  /** Never contact the gateway; serve the offline seed catalog. */
  offline: boolean;
  /** Profile that narrows search when a search names none (unset: every profile). */
  defaultProfile: (typeof PROFILE_NAMES)[number] | undefined;
  /** JSON file with the backend table (`[{ backend, target, profile }]`); unset: the 12 defaults. */
  backendsFile: string | undefined;
  /** Workspace root whose verified skills are served over the MCP skills extension; unset: none. */
  skillsRoot: string | undefined;
  /** Pinned tool definitions (trust on first use); `--pin` accepts changes. */
  pinsFile: string;
  /** What a changed pinned tool gets: `refuse` (mutating ones cannot be called), `warn`, or `off` (no pins). */
  pinPolicy: PinPolicy;
  /** Never write the pins file on its own (a committed lock reviewed like code). */
  pinsReadOnly: boolean;
  /** Where learned search-then-call uses are kept, or `off`. */
  usageFile: string;
};

const positiveInteger = (name: string, max: number) =>
  z
    .string()
    .regex(
      /^\d+$/,
      `${name} must be a whole number of milliseconds, e.g. 30000`,
    )
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `${name} must be between 1 and ${max}`);

const flag = (name: string) =>
  z
    .enum(['0', '1', 'true', 'false'], {
      error: `${name} must be 1 or 0 (true or false)`,
    })
    .transform((v) => v === '1' || v === 'true');

/**
 * The pin policies, spelt here so that reading the configuration loads none of
 * the trust layer; the type check fails the build if the lists differ.
 */
const PIN_POLICIES = [
  'refuse',
  'warn',
  'off',
] as const satisfies readonly PinPolicy[];
type MissingPolicy = Exclude<PinPolicy, (typeof PIN_POLICIES)[number]>;
const everyPolicyListed: [MissingPolicy] extends [never]
  ? true
  : MissingPolicy = true;
void everyPolicyListed;

const environmentSchema = z.object({
  // The URL rules (http(s), no credentials, no trailing /mcp) are the gateway
  // client's: createGateway checks them with its option schema when the
  // broker goes online, so an offline broker never loads the client.
  HERETEK_GATEWAY_URL: z
    .string()
    .default('http://127.0.0.1:3000')
    .transform((url) => url.replace(/\/+$/, '')),
  HERETEK_GATEWAY_MODE: z
    .enum(GATEWAY_MODES, {
      error: `HERETEK_GATEWAY_MODE must be ${GATEWAY_MODES.join(' or ')}`,
    })
    .default('per-target'),
  HERETEK_GATEWAY_TOKEN: z
    .string()
    .min(
      1,
      'HERETEK_GATEWAY_TOKEN is set but empty: unset it or give the token',
    )
    .refine(
      (t) => !/\s/.test(t),
      'HERETEK_GATEWAY_TOKEN must not contain whitespace',
    )
    .optional(),
  HERETEK_GATEWAY_TIMEOUT_MS: positiveInteger(
    'HERETEK_GATEWAY_TIMEOUT_MS',
    3_600_000,
  ).default(30_000),
  HERETEK_BROKER_ROLE: z
    .enum(ROLE_NAMES, {
      error: `HERETEK_BROKER_ROLE must be one of ${ROLE_NAMES.join(', ')}`,
    })
    .default('director'),
  HERETEK_DISCOVERY_TTL_MS: positiveInteger(
    'HERETEK_DISCOVERY_TTL_MS',
    86_400_000,
  ).default(300_000),
  HERETEK_BROKER_OFFLINE: flag('HERETEK_BROKER_OFFLINE').default(false),
  HERETEK_BROKER_PROFILE: z
    .enum(PROFILE_NAMES, {
      error: `HERETEK_BROKER_PROFILE must be one of ${PROFILE_NAMES.join(', ')}`,
    })
    .optional(),
  HERETEK_BACKENDS_FILE: z
    .string()
    .min(1, 'HERETEK_BACKENDS_FILE is set but empty')
    .optional(),
  HERETEK_SKILLS_ROOT: z
    .string()
    .min(1, 'HERETEK_SKILLS_ROOT is set but empty')
    .optional(),
  HERETEK_PINS_FILE: z.string().optional(),
  HERETEK_PIN_POLICY: z
    .enum(PIN_POLICIES, {
      error: `HERETEK_PIN_POLICY must be one of ${PIN_POLICIES.join(', ')}`,
    })
    .default('refuse'),
  HERETEK_PINS_READ_ONLY: flag('HERETEK_PINS_READ_ONLY').default(false),
  HERETEK_USAGE_FILE: z.string().optional(),
});

/** The environment variables the broker reads, with their defaults, for `--help`. */
export const ENVIRONMENT_HELP: ReadonlyArray<
  readonly [string, string, string]
> = [
  ['HERETEK_GATEWAY_URL', 'http://127.0.0.1:3000', 'agentgateway base URL'],
  [
    'HERETEK_GATEWAY_MODE',
    'per-target',
    'per-target (/mcp/<target>) or multiplexed (/mcp)',
  ],
  ['HERETEK_GATEWAY_TOKEN', 'unset', 'sent as Authorization: Bearer <token>'],
  ['HERETEK_GATEWAY_TIMEOUT_MS', '30000', 'per-request timeout'],
  [
    'HERETEK_BROKER_ROLE',
    'director',
    `caller role (${ROLE_NAMES.join(', ')}); default is read-only`,
  ],
  [
    'HERETEK_DISCOVERY_TTL_MS',
    '300000',
    're-run discovery on the next search after this long',
  ],
  [
    'HERETEK_BROKER_OFFLINE',
    'unset',
    '1 = never contact the gateway; serve the offline seed catalog',
  ],
  [
    'HERETEK_BROKER_PROFILE',
    'unset',
    `default search profile (${PROFILE_NAMES.join(', ')})`,
  ],
  [
    'HERETEK_BACKENDS_FILE',
    'unset',
    'JSON backend table [{backend,target,profile}] replacing the 12 defaults',
  ],
  [
    'HERETEK_SKILLS_ROOT',
    'unset',
    'workspace root whose lock-verified skills are served (MCP skills extension)',
  ],
  [
    'HERETEK_PINS_FILE',
    '$XDG_STATE_HOME/heretek/pins.json',
    'pinned tool definitions (trust on first use; --pin accepts changes)',
  ],
  [
    'HERETEK_PIN_POLICY',
    'refuse',
    'refuse (a changed mutating tool cannot be called), warn, or off',
  ],
  [
    'HERETEK_PINS_READ_ONLY',
    'unset',
    '1 = never write the pins file on its own (a committed lock)',
  ],
  [
    'HERETEK_USAGE_FILE',
    '$XDG_STATE_HOME/heretek/usage.jsonl',
    'learned search-then-call uses (JSONL); off disables learning',
  ],
];

/**
 * Reads and validates the broker configuration from an environment. Unset or
 * empty-string variables take their defaults; any other bad value throws
 * {@link BrokerConfigError} naming the variable. Nothing falls back silently.
 */
export function loadBrokerConfig(
  env: NodeJS.ProcessEnv | Record<string, string | undefined>,
): BrokerConfig {
  const relevant: Record<string, string> = {};
  for (const key of Object.keys(environmentSchema.shape)) {
    const value = env[key];
    // An empty token is a mistake worth naming; other empty variables mean "unset".
    if (
      value !== undefined &&
      (value !== '' || key === 'HERETEK_GATEWAY_TOKEN')
    )
      relevant[key] = value;
  }
  const parsed = environmentSchema.safeParse(relevant);
  if (!parsed.success) {
    throw new BrokerConfigError(
      parsed.error.issues.map((issue) => {
        const variable = String(issue.path[0] ?? 'environment');
        return issue.message.startsWith(variable)
          ? issue.message
          : `${variable}: ${issue.message}`;
      }),
    );
  }
  const e = parsed.data;
  return {
    gatewayUrl: e.HERETEK_GATEWAY_URL,
    gatewayMode: e.HERETEK_GATEWAY_MODE,
    gatewayToken: e.HERETEK_GATEWAY_TOKEN,
    gatewayTimeoutMs: e.HERETEK_GATEWAY_TIMEOUT_MS,
    role: e.HERETEK_BROKER_ROLE,
    discoveryTtlMs: e.HERETEK_DISCOVERY_TTL_MS,
    offline: e.HERETEK_BROKER_OFFLINE,
    defaultProfile: e.HERETEK_BROKER_PROFILE,
    backendsFile: e.HERETEK_BACKENDS_FILE,
    skillsRoot: e.HERETEK_SKILLS_ROOT,
    pinsFile:
      e.HERETEK_PINS_FILE ?? path.join(heretekStateDir({ env }), 'pins.json'),
    pinPolicy: e.HERETEK_PIN_POLICY,
    pinsReadOnly: e.HERETEK_PINS_READ_ONLY,
    usageFile:
      e.HERETEK_USAGE_FILE ??
      path.join(heretekStateDir({ env }), 'usage.jsonl'),
  };
}
