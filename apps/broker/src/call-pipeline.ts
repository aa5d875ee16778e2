import type { Backend, ToolCatalog, ToolEntry } from '@heretek/catalog';
import { splitMultiplexedName } from '@heretek/internal';
import type { RoleName } from '@heretek/prefix';
import type { ArgumentValidator } from './argument-validator.js';
import type { DiscoveryProgress } from './discovery.js';
import type { BackendBreakers } from './breakers.js';
import { isRetryableError } from './breakers.js';
import { errorText } from './error-text.js';
import { BrokerError, quote } from './errors.js';
import type { CallHandlers, ToolCallResult, ToolGateway } from './types.js';

/** Where a call goes: the backend target and the tool's name there. */
export type CallRoute = { target: string; tool: string };

/**
 * One `mcp_call_tool` after the broker's route and authorisation: the argument check (Ajv,
 * loaded on first use), the backend's circuit breaker, then `tools/call` with the caller's
 * role. Checks on the caller and arguments come first, so a refusal never says retry later.
 */
export class CallPipeline {
  #validator: Promise<ArgumentValidator> | undefined;
  #inFlight = 0;

  constructor(
    private readonly context: {
      catalog: ToolCatalog;
      /** Known backends (for routing names the catalog does not hold). */
      backends: ReadonlyMap<string, Backend>;
      gateway: ToolGateway | undefined;
      breakers: BackendBreakers;
      /** Aborted when the broker shuts down: every call in flight is cancelled. */
      shutdown: AbortSignal;
      log: (line: string) => void;
    },
  ) {}

  /** Calls now in flight (they are aborted when the broker shuts down). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Where a call goes: its entry's backend, `<target>_<tool>` of a known target, or `UNKNOWN_TOOL`. */
  route(name: string, entry: ToolEntry | undefined): CallRoute {
    if (entry !== undefined) return { target: entry.target, tool: entry.tool };
    // An uncatalogued name is split at the first `_` (agentgateway's convention) when its target is known.
    const route =
      this.context.gateway === undefined
        ? undefined
        : splitMultiplexedName(name);
    if (route === undefined || !this.context.backends.has(route.target))
      throw unknownTool(this.context.catalog, name);
    return route;
  }

  /** Sends an authorised call; refusals and failures throw {@link BrokerError}. */
  async call(
    options: {
      name: string;
      entry: ToolEntry | undefined;
      route: CallRoute;
      /** Whether the tool counts as mutating (from the call's authorisation). */
      mutating: boolean;
      /** The caller's role, sent to the gateway as the call's role. */
      role: RoleName;
      arguments: Record<string, unknown>;
      signal?: AbortSignal;
    } & CallHandlers,
  ): Promise<ToolCallResult> {
    const { name, entry, route, mutating, arguments: args } = options;
    await this.#checkArguments(name, entry, args, route.target);
    const gateway = this.context.gateway;
    if (gateway === undefined)
      throw new BrokerError({
        code: 'NO_GATEWAY',
        toolName: name,
        message: `No gateway is configured: the broker runs offline (HERETEK_BROKER_OFFLINE=1). The call to ${quote(name)} passed the role and argument checks but was not sent. Unset HERETEK_BROKER_OFFLINE and set HERETEK_GATEWAY_URL to call tools.`,
      });
    const signal =
      options.signal === undefined
        ? this.context.shutdown
        : AbortSignal.any([options.signal, this.context.shutdown]);
    this.#inFlight += 1;
    try {
      return await this.context.breakers.execute(route.target, name, () =>
        gateway.callTool({
          target: route.target,
          tool: route.tool,
          arguments: args,
          role: options.role,
          signal,
          // No onProgress (no progress token from the client): the backend is not asked for progress.
          onProgress: options.onProgress,
          // The backend's requests during this call go to the call's own handlers.
          onElicitation: options.onElicitation,
          onSampling: options.onSampling,
          // A tool that requires a task is called as one; the broker waits for its result.
          task: entry?.taskSupport === 'required',
        }),
      );
    } catch (error) {
      if (BrokerError.isInstance(error)) throw error;
      if (options.signal?.aborted === true || this.context.shutdown.aborted)
        throw new BrokerError({
          code: 'CANCELLED',
          toolName: name,
          message: this.context.shutdown.aborted
            ? `The call to ${quote(name)} was cancelled: the broker is shutting down.`
            : `The call to ${quote(name)} was cancelled.`,
          cause: error,
        });
      const retryable = isRetryableError(error);
      throw new BrokerError({
        code: 'BACKEND_FAILED',
        toolName: name,
        isRetryable: retryable,
        message: `Calling ${quote(name)} through the gateway failed: ${errorText(error)}. ${
          !retryable
            ? 'Retrying unchanged will fail the same way.'
            : mutating
              ? 'The tool may have run before the failure: check its effect before retrying.'
              : 'It may succeed if retried later.'
        }`,
        cause: error,
      });
    } finally {
      this.#inFlight -= 1;
    }
  }

  async #checkArguments(
    name: string,
    entry: ToolEntry | undefined,
    args: Record<string, unknown>,
    target: string,
  ): Promise<void> {
    if (entry === undefined) {
      this.context.log(
        `call: ${quote(name)} is not in the catalog; passing it to target "${target}" unchecked`,
      );
      return;
    }
    this.#validator ??= import('./argument-validator.js').then(
      (m) => new m.ArgumentValidator(),
    );
    const check = (await this.#validator).check(entry.inputSchema, args);
    if (check.ok === false)
      throw new BrokerError({
        code: 'INVALID_ARGUMENTS',
        toolName: name,
        message: `Arguments for ${quote(name)} do not match its schema; nothing was sent:\n${check.problems
          .map((p) => `- ${p}`)
          .join(
            '\n',
          )}\nCall mcp_inspect_schema with name ${quote(name)} for the full schema.`,
      });
    if (check.ok === 'unchecked')
      this.context.log(
        `call: schema of ${name} cannot be compiled (${check.reason}); arguments passed unchecked`,
      );
  }
}

/** `UNKNOWN_TOOL` for a name outside the catalog, with the closest names. */
export function unknownTool(
  catalog: ToolCatalog,
  name: string,
  discovering?: DiscoveryProgress,
): BrokerError {
  const suggestions = catalog
    .search({ query: name.slice(0, 256).replace(/[_\-.]+/g, ' '), limit: 3 })
    .hits.map((h) => h.name);
  return new BrokerError({
    code: 'UNKNOWN_TOOL',
    toolName: name,
    message: `No tool named ${quote(name)} in the catalog.${
      suggestions.length > 0 ? ` Closest: ${suggestions.join(', ')}.` : ''
    } Use mcp_search_tools to find the exact name.${
      discovering === undefined ? '' : ` ${discoveringNote(discovering)}`
    }`,
  });
}

/** What an answer given during start-up discovery says about the backends not listed yet. */
export function discoveringNote(discovering: DiscoveryProgress): string {
  return `Discovery is still listing ${discovering.pending} of ${discovering.total} backends: their tools are not in the catalog yet; ask again in a moment.`;
}
