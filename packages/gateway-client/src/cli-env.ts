import { z } from 'zod';
import {
  DEFAULTS,
  GATEWAY_MODES,
  gatewayUrl,
  type GatewayClientOptions,
} from './config.js';
import { GatewayConfigError } from './errors.js';

/** The environment variables of `heretek-gateway` (the broker's names), by option. */
export const ENV = {
  url: 'HERETEK_GATEWAY_URL',
  mode: 'HERETEK_GATEWAY_MODE',
  token: 'HERETEK_GATEWAY_TOKEN',
  timeoutMs: 'HERETEK_GATEWAY_TIMEOUT_MS',
  role: 'HERETEK_BROKER_ROLE',
  maxResponseBytes: 'HERETEK_GATEWAY_MAX_RESPONSE_BYTES',
  maxConcurrentPerEndpoint: 'HERETEK_GATEWAY_MAX_CONCURRENCY',
} as const;

const wholeNumber = (unit: string) =>
  z
    .string()
    .regex(/^\d+$/, `must be a positive whole number${unit}`)
    .transform(Number)
    .pipe(z.number().int().positive(`must be a positive whole number${unit}`));

// The URL last: when several variables are wrong, the first issue named is not the URL's.
const envSchema = z.object({
  [ENV.mode]: z.enum(GATEWAY_MODES).default('per-target'),
  [ENV.token]: z.string().optional(),
  [ENV.timeoutMs]: wholeNumber(' of milliseconds').default(DEFAULTS.timeoutMs),
  [ENV.role]: z.string().min(1, 'must not be empty').default('director'),
  [ENV.maxResponseBytes]: wholeNumber(' of bytes').optional(),
  [ENV.maxConcurrentPerEndpoint]: wholeNumber('').optional(),
  [ENV.url]: gatewayUrl(ENV.token).default('http://127.0.0.1:3000'),
});

/**
 * The client options of `heretek-gateway`, read from the broker's variables
 * ({@link ENV}). Empty values count as unset. A bad value throws
 * {@link GatewayConfigError} naming the variable (never the token's value).
 */
export function gatewayOptionsFromEnv(
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
  return {
    url: data[ENV.url],
    mode: data[ENV.mode],
    role: data[ENV.role],
    timeoutMs: data[ENV.timeoutMs],
    token: data[ENV.token],
    maxResponseBytes: data[ENV.maxResponseBytes],
    maxConcurrentPerEndpoint: data[ENV.maxConcurrentPerEndpoint],
  };
}
