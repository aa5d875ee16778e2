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
  mode: z.enum(GATEWAY_MODES).default('per-target'),
  token: z.string().optional(),
  timeoutMs: wholeNumber(' of milliseconds').default(DEFAULTS.timeoutMs),
  role: z.string().min(1, 'must not be empty').default('director'),
  maxResponseBytes: wholeNumber(' of bytes').optional(),
  maxConcurrentPerEndpoint: wholeNumber('').optional(),
  url: gatewayUrl(ENV.token).default('http://127.0.0.1:3000'),
});

/**
 * The client options of `heretek-gateway`, read from the broker's variables
 * ({@link ENV}). Empty values count as unset. A bad value throws
 * {@link GatewayConfigError} naming the variable (never the token's value).
 */
export function gatewayOptionsFromEnv(
  env: NodeJS.ProcessEnv,
): GatewayClientOptions {
  const input: Partial<Record<keyof typeof ENV, string>> = {};
  for (const [option, variable] of Object.entries(ENV)) {
    const value = env[variable]?.trim();
    if (value) input[option as keyof typeof ENV] = value;
  }
  const result = envSchema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const option = issue?.path[0] as keyof typeof ENV | undefined;
  const variable = option === undefined ? 'environment' : ENV[option];
  const value = option && option !== 'token' ? input[option] : undefined;
  throw new GatewayConfigError({
    setting: variable,
    message: `Invalid ${variable}${value === undefined ? '' : ` (got ${JSON.stringify(value)})`}: ${issue?.message ?? 'invalid value'}.`,
  });
}
