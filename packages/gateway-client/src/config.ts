import { z } from 'zod';
import { GatewayConfigError } from './errors.js';

/** How the gateway routes to targets. */
export type GatewayMode = 'per-target' | 'multiplexed';

/** Options of a {@link GatewayClient}. */
export type GatewayClientOptions = {
  /** Gateway base URL, e.g. `http://127.0.0.1:3000` (no trailing `/mcp`). */
  url: string;
  /** `per-target`: `<url>/mcp/<target>`, bare tool names. `multiplexed`: `<url>/mcp`, names `<target>_<tool>`. */
  mode: GatewayMode;
  /** Sent as `Authorization: Bearer <token>`; never logged or put in an error. */
  token?: string | undefined;
  /** Caller role, sent as `x-heretek-role` on every request. */
  role: string;
  /** Per-request timeout in milliseconds (default 30000). */
  timeoutMs?: number | undefined;
  /** Largest reply body accepted, in bytes (default 8 MiB). */
  maxResponseBytes?: number | undefined;
  /** Most requests in flight per endpoint; later ones wait (default 16). */
  maxConcurrentPerEndpoint?: number | undefined;
  /** Most `tools/list` pages followed before giving up with `CURSOR_LOOP` (default 1000). */
  maxListPages?: number | undefined;
  /** Name sent as `clientInfo.name` (default `heretek-gateway-client`). */
  clientName?: string | undefined;
};

/** Default per-request timeout. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Default reply size cap (8 MiB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Default concurrent requests per endpoint. */
export const DEFAULT_MAX_CONCURRENT_PER_ENDPOINT = 16;
/** Default cap on `tools/list` pages. */
export const DEFAULT_MAX_LIST_PAGES = 1000;

const httpUrl = z.string().refine((value) => {
  try {
    return /^https?:$/.test(new URL(value).protocol);
  } catch {
    return false;
  }
}, 'must be an absolute http:// or https:// URL');

const positiveInteger = z.coerce.number().int().positive();

/** Schema of {@link GatewayClientOptions}; strict, so a misspelt option is an error. */
export const gatewayClientOptionsSchema = z
  .object({
    url: httpUrl,
    mode: z.enum(['per-target', 'multiplexed']),
    token: z.string().min(1).optional(),
    role: z.string().min(1),
    timeoutMs: positiveInteger.optional(),
    maxResponseBytes: positiveInteger.optional(),
    maxConcurrentPerEndpoint: positiveInteger.optional(),
    maxListPages: positiveInteger.optional(),
    clientName: z.string().min(1).optional(),
  })
  .strict();

/**
 * Validate client options; throws {@link GatewayConfigError} naming the
 * option. The token value is never echoed.
 */
export function parseGatewayClientOptions(
  options: GatewayClientOptions,
): GatewayClientOptions {
  const result = gatewayClientOptionsSchema.safeParse(options);
  if (!result.success) {
    const issue = result.error.issues[0];
    const setting = issue?.path.map(String).join('.') || 'options';
    throw new GatewayConfigError({
      setting,
      message: `Invalid gateway client option '${setting}': ${issue?.message ?? 'invalid'}.`,
    });
  }
  return result.data;
}

const ENV = {
  url: 'HERETEK_GATEWAY_URL',
  mode: 'HERETEK_GATEWAY_MODE',
  token: 'HERETEK_GATEWAY_TOKEN',
  timeoutMs: 'HERETEK_GATEWAY_TIMEOUT_MS',
  role: 'HERETEK_BROKER_ROLE',
  maxResponseBytes: 'HERETEK_GATEWAY_MAX_RESPONSE_BYTES',
  maxConcurrentPerEndpoint: 'HERETEK_GATEWAY_MAX_CONCURRENCY',
} as const;

const envSchema = z.object({
  [ENV.url]: httpUrl.default('http://127.0.0.1:3000'),
  [ENV.mode]: z.enum(['per-target', 'multiplexed']).default('per-target'),
  [ENV.token]: z.string().optional(),
  [ENV.timeoutMs]: z
    .string()
    .regex(/^\d+$/, 'must be a positive whole number of milliseconds')
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .positive('must be a positive whole number of milliseconds'),
    )
    .default(DEFAULT_TIMEOUT_MS),
  [ENV.role]: z.string().min(1, 'must not be empty').default('director'),
  [ENV.maxResponseBytes]: z
    .string()
    .regex(/^\d+$/, 'must be a positive whole number of bytes')
    .transform(Number)
    .pipe(z.number().int().positive('must be a positive whole number of bytes'))
    .optional(),
  [ENV.maxConcurrentPerEndpoint]: z
    .string()
    .regex(/^\d+$/, 'must be a positive whole number')
    .transform(Number)
    .pipe(z.number().int().positive('must be a positive whole number'))
    .optional(),
});

/**
 * Read the gateway client options from the environment the broker uses:
 * `HERETEK_GATEWAY_URL` (default `http://127.0.0.1:3000`),
 * `HERETEK_GATEWAY_MODE` (`per-target` | `multiplexed`, default `per-target`),
 * `HERETEK_GATEWAY_TOKEN` (optional), `HERETEK_GATEWAY_TIMEOUT_MS` (default
 * 30000), `HERETEK_BROKER_ROLE` (default `director`), and optionally
 * `HERETEK_GATEWAY_MAX_RESPONSE_BYTES` and `HERETEK_GATEWAY_MAX_CONCURRENCY`.
 * Empty values count as unset. A bad value throws {@link GatewayConfigError}
 * whose message names the variable (never its value when it is the token).
 *
 * @example
 * ```ts
 * const client = new GatewayClient(gatewayConfigFromEnv(process.env));
 * ```
 */
export function gatewayConfigFromEnv(
  env: NodeJS.ProcessEnv,
): GatewayClientOptions {
  const input: Record<string, string> = {};
  for (const name of Object.values(ENV)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') input[name] = value.trim();
  }
  const result = envSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    const shown =
      variable === ENV.token || input[variable] === undefined
        ? ''
        : ` (got ${JSON.stringify(input[variable])})`;
    throw new GatewayConfigError({
      setting: variable,
      message: `Invalid ${variable}${shown}: ${issue?.message ?? 'invalid value'}.`,
    });
  }
  const data = result.data;
  const options: GatewayClientOptions = {
    url: data[ENV.url],
    mode: data[ENV.mode],
    role: data[ENV.role],
    timeoutMs: data[ENV.timeoutMs],
  };
  if (data[ENV.token] !== undefined) options.token = data[ENV.token];
  if (data[ENV.maxResponseBytes] !== undefined)
    options.maxResponseBytes = data[ENV.maxResponseBytes];
  if (data[ENV.maxConcurrentPerEndpoint] !== undefined)
    options.maxConcurrentPerEndpoint = data[ENV.maxConcurrentPerEndpoint];
  return options;
}
