import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
} from '@modelcontextprotocol/client';
import { z } from 'zod';
import { GATEWAY_MODES, type GatewayMode } from '@heretek/internal';
import { GatewayConfigError } from './errors.js';

/** What a backend's `notifications/message` is passed on as ({@link GatewayClientOptions.onLog}). */
export type GatewayLogEntry = {
  /** The target whose reply carried it (`*`: the multiplexed endpoint's own stream). */
  target: string;
  /** The MCP log level (`debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`). */
  level: string;
  logger?: string;
  data: unknown;
};

/** A server-to-client request during a call, with the target it came from. */
export type ServerRequestFrom<Params> = {
  /** The target whose call the request arrived on (`*` when it came outside a call on the multiplexed endpoint). */
  target: string;
  params: Params;
};

/** What a server-to-client request handler gets besides the request. */
export type ServerRequestExtra = {
  /** Aborted when the server cancels the request, or the client closes. */
  signal: AbortSignal;
};

/** Answers a backend's `elicitation/create` (see {@link GatewayClientOptions.onElicitation}). */
export type ElicitationHandler = (
  request: ServerRequestFrom<ElicitRequest['params']>,
  extra: ServerRequestExtra,
) => Promise<ElicitResult>;

/** Answers a backend's `sampling/createMessage` (see {@link GatewayClientOptions.onSampling}). */
export type SamplingHandler = (
  request: ServerRequestFrom<CreateMessageRequest['params']>,
  extra: ServerRequestExtra,
) => Promise<CreateMessageResult>;

/** Handlers of the server-to-client requests of one call ({@link CallToolOptions}). */
export type CallHandlers = {
  /**
   * Answers the `elicitation/create` requests this call's replies carry (on
   * its stream, or in a 2026-07-28 `input_required` answer), before the
   * client-wide `onElicitation`. Needs the `elicitation` capability declared.
   */
  onElicitation?: ElicitationHandler | undefined;
  /** Answers the `sampling/createMessage` requests of this call, as `onElicitation` does. */
  onSampling?: SamplingHandler | undefined;
};

/** The server-to-client requests a client can declare it answers: each one's method, handler option and capability. */
export const SERVER_REQUESTS = {
  elicitation: {
    method: 'elicitation/create',
    handler: 'onElicitation',
    capability: { form: {} },
  },
  sampling: {
    method: 'sampling/createMessage',
    handler: 'onSampling',
    capability: {},
  },
} as const;

export type ServerRequestKind = keyof typeof SERVER_REQUESTS;

export const SERVER_REQUEST_KINDS = ['elicitation', 'sampling'] as const;

// The routing modes live with the other agentgateway facts in @heretek/internal.
export { GATEWAY_MODES, type GatewayMode };

/** Options of a {@link GatewayClient} (the package README's table says more). */
export type GatewayClientOptions = {
  /** Gateway base URL, e.g. `http://127.0.0.1:3000`: no trailing `/mcp`, no credentials. */
  url: string;
  /** `per-target`: `<url>/mcp/<target>`, bare tool names. `multiplexed`: `<url>/mcp`, names `<target>_<tool>`. */
  mode: GatewayMode;
  /** Sent as `Authorization: Bearer <token>`; never logged or put in an error. */
  token?: string | undefined;
  /** Caller role, sent as `x-heretek-role` on every request (the gateway's policy judges it). */
  role: string;
  /** Per-request timeout in milliseconds (default 30000). */
  timeoutMs?: number | undefined;
  /**
   * Bound of connecting to an endpoint (default the larger of `timeoutMs` and
   * 60000). A request stops waiting at its own `timeoutMs`; the connect goes
   * on for later requests (a backend slower to start than `timeoutMs`).
   */
  connectTimeoutMs?: number | undefined;
  /** Largest reply body accepted, in bytes (default 8 MiB). */
  maxResponseBytes?: number | undefined;
  /** Most requests in flight per endpoint; later ones wait (default 16). */
  maxConcurrentPerEndpoint?: number | undefined;
  /** Most `tools/list` pages followed before giving up with `PROTOCOL_ERROR` (default 1000). */
  maxListPages?: number | undefined;
  /** Name sent as `clientInfo.name` (default `heretek-gateway-client`). */
  clientName?: string | undefined;
  /**
   * Called on `notifications/tools/list_changed`; when given, each session's
   * standalone GET stream is held open. In multiplexed mode the target is `*`.
   */
  onToolsListChanged?: ((event: { target: string }) => void) | undefined;
  /**
   * Most standalone GET streams held open at once (default: no limit; one
   * socket and about 30 KB each). Later sessions are told 405 locally until a
   * slot frees up, and their list changes are not pushed: list them again.
   */
  maxStandaloneStreams?: number | undefined;
  /** Answers a backend's `elicitation/create` no per-call handler answers; declares the `elicitation` capability. */
  onElicitation?: ElicitationHandler | undefined;
  /** Answers a backend's `sampling/createMessage`, as `onElicitation` does. */
  onSampling?: SamplingHandler | undefined;
  /** Capabilities to declare for per-call handlers only (without a client-wide handler). */
  serverRequests?: ReadonlyArray<ServerRequestKind> | undefined;
  /** Receives each backend `notifications/message`; it also opens the standalone stream. */
  onLog?: ((entry: GatewayLogEntry) => void) | undefined;
};

/** Defaults of the options (`connectTimeoutMs`: its least default, see there). */
export const DEFAULTS = {
  timeoutMs: 30_000,
  connectTimeoutMs: 60_000,
  maxResponseBytes: 8 * 1024 * 1024,
  maxConcurrentPerEndpoint: 16,
  maxListPages: 1000,
} as const;

/**
 * Why `value` is no gateway base URL: not absolute http(s), credentials (they
 * would go to every backend and show in logs), or a trailing `/mcp`.
 */
function urlProblem(value: string, token: string): string | undefined {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || !/^https?:$/.test(url.protocol))
    return 'must be an absolute http:// or https:// URL';
  if (url.username !== '' || url.password !== '')
    return `must not carry credentials (user:password@); pass the bearer token as ${token}`;
  if (/\/mcp\/*$/i.test(url.pathname))
    return `must be the gateway base URL without the trailing /mcp (the client appends /mcp or /mcp/<target>): use ${JSON.stringify(value.replace(/\/mcp\/*$/i, ''))}`;
  return undefined;
}

/** A gateway base URL (see `urlProblem`); `token` names where the token goes instead. */
export const gatewayUrl = (token = 'the `token` option') =>
  z.string().superRefine((value, context) => {
    const message = urlProblem(value, token);
    if (message !== undefined) context.addIssue({ code: 'custom', message });
  });

const positiveInteger = z.coerce.number().int().positive();

const callback = z.custom<(...args: never[]) => unknown>(
  (value) => typeof value === 'function',
  'must be a function',
);

/** Schema of {@link GatewayClientOptions}; strict, so a misspelt option is an error. */
export const gatewayClientOptionsSchema = z
  .object({
    url: gatewayUrl(),
    mode: z.enum(GATEWAY_MODES),
    token: z.string().min(1).optional(),
    role: z.string().min(1),
    timeoutMs: positiveInteger.optional(),
    connectTimeoutMs: positiveInteger.optional(),
    maxResponseBytes: positiveInteger.optional(),
    maxConcurrentPerEndpoint: positiveInteger.optional(),
    maxListPages: positiveInteger.optional(),
    maxStandaloneStreams: positiveInteger.optional(),
    clientName: z.string().min(1).optional(),
    onToolsListChanged: callback.optional(),
    onElicitation: callback.optional(),
    onSampling: callback.optional(),
    onLog: callback.optional(),
    serverRequests: z.array(z.enum(SERVER_REQUEST_KINDS)).optional(),
  })
  .strict();

/** The first issue of a failed parse, as a {@link GatewayConfigError} naming the option. */
function configError(
  error: z.ZodError,
  what: string,
  target?: string,
): GatewayConfigError {
  const issue = error.issues[0];
  const setting = issue?.path.map(String).join('.') || 'options';
  return new GatewayConfigError({
    setting,
    target,
    message: `Invalid ${what} option '${setting}': ${issue?.message ?? 'invalid'}.`,
  });
}

/** Validate client options; throws {@link GatewayConfigError} naming the option (never the token's value). */
export function parseGatewayClientOptions(
  options: GatewayClientOptions,
): GatewayClientOptions {
  const result = gatewayClientOptionsSchema.safeParse(options);
  if (!result.success) throw configError(result.error, 'gateway client');
  // The callbacks as given (the schema only checks that they are functions).
  return { ...options, ...result.data } as GatewayClientOptions;
}

/** What `callTool` checks of its options before sending anything. */
const callOptionsSchema = z.object({
  tool: z.string().min(1),
  maxTotalTimeoutMs: positiveInteger.optional(),
  role: z.string().min(1).optional(),
  onProgress: callback.optional(),
  onElicitation: callback.optional(),
  onSampling: callback.optional(),
  task: z
    .union([
      z.boolean(),
      // Not .int(): a union reports a type issue as its own, not the member's.
      z.object({ ttlMs: z.number().positive().multipleOf(1).optional() }),
    ])
    .optional(),
});

/** Check the options of one call, and its handlers against the capabilities `declared`. */
export function checkCallOptions(
  options: object,
  target: string,
  declared: ReadonlyArray<ServerRequestKind>,
): void {
  const result = callOptionsSchema.safeParse(options);
  if (!result.success) throw configError(result.error, 'callTool', target);
  for (const kind of SERVER_REQUEST_KINDS) {
    const setting = SERVER_REQUESTS[kind].handler;
    if (result.data[setting] !== undefined && !declared.includes(kind))
      throw new GatewayConfigError({
        setting,
        target,
        message: `Invalid callTool option '${setting}': the client does not declare the ${kind} capability, so no server would ask; create the GatewayClient with serverRequests: ['${kind}'] (or a client-wide handler).`,
      });
  }
}
