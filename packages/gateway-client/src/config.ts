import { z } from 'zod';
import { GatewayConfigError } from './errors.js';

/**
 * The routing modes of agentgateway the client speaks: `per-target`
 * (`<url>/mcp/<target>`, bare tool names) and `multiplexed` (`<url>/mcp`,
 * names `<target>_<tool>`).
 */
export const GATEWAY_MODES = ['per-target', 'multiplexed'] as const;

/** How the gateway routes to targets; one of {@link GATEWAY_MODES}. */
export type GatewayMode = (typeof GATEWAY_MODES)[number];

/** Options of a {@link GatewayClient}. */
export type GatewayClientOptions = {
  /** Gateway base URL, e.g. `http://127.0.0.1:3000`: no trailing `/mcp`, no credentials. */
  url: string;
  /** `per-target`: `<url>/mcp/<target>`, bare tool names. `multiplexed`: `<url>/mcp`, names `<target>_<tool>`. */
  mode: GatewayMode;
  /** Sent as `Authorization: Bearer <token>`; never logged or put in an error. */
  token?: string | undefined;
  /** Caller role, sent as `x-heretek-role` on every request (the client does not judge it; the gateway's policy does). */
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

function parsedUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * The gateway base URL: absolute http(s), no credentials (they would be sent
 * to every backend and show in logs: use `token`), and not already ending in
 * `/mcp` (the client appends `/mcp` or `/mcp/<target>` itself).
 */
const gatewayUrl = z.string().superRefine((value, context) => {
  const url = parsedUrl(value);
  if (!url || !/^https?:$/.test(url.protocol)) {
    context.addIssue({
      code: 'custom',
      message: 'must be an absolute http:// or https:// URL',
    });
    return;
  }
  if (url.username !== '' || url.password !== '') {
    context.addIssue({
      code: 'custom',
      message:
        'must not carry credentials (user:password@); pass the bearer token as the `token` option',
    });
    return;
  }
  if (/\/mcp\/*$/i.test(url.pathname)) {
    context.addIssue({
      code: 'custom',
      message: `must be the gateway base URL without the trailing /mcp (the client appends /mcp or /mcp/<target>): use ${JSON.stringify(value.replace(/\/mcp\/*$/i, ''))}`,
    });
  }
});

const positiveInteger = z.coerce.number().int().positive();

/** Schema of {@link GatewayClientOptions}; strict, so a misspelt option is an error. */
export const gatewayClientOptionsSchema = z
  .object({
    url: gatewayUrl,
    mode: z.enum(GATEWAY_MODES),
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
