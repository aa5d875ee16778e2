import {
  ProtocolErrorCode,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
  type McpServer,
} from '@modelcontextprotocol/server';
import { errorText } from './error-text.js';
import {
  ASKS,
  ANSWER_TIMEOUT_MS,
  notDeclared,
  rpcError,
  type InputFeature,
  type InputRounds,
} from './input-rounds.js';
import type { GatewayLogEntry } from '@heretek/gateway-client';
import type { BackendRequest } from './types.js';

/** Longest backend log text written to stderr, in characters. */
const MAX_LOG_CHARS = 2_000;

/**
 * What a backend sends outside a call with handlers of its own:
 * `elicitation/create` and `sampling/createMessage` go to the broker's MCP
 * client as server-to-client requests (MCP 2025-11-25) when it declared the
 * capability, and are refused with Method not found when it did not, or when
 * it speaks 2026-07-28 (input is asked for only in the answer to a call, see
 * {@link InputRounds}); `notifications/message` goes to stderr.
 */
export class ClientBridge {
  /** Requests go to `server`'s client; with `rounds`, never to a client that has sent a 2026-07-28 call. */
  constructor(
    private readonly server: McpServer,
    private readonly log: (line: string) => void,
    private readonly rounds?: InputRounds,
  ) {}

  /** Forwards a backend's elicitation to the client; the answer goes back as it came. */
  readonly elicit = (
    request: BackendRequest<ElicitRequest['params']>,
    extra: { signal: AbortSignal },
  ): Promise<ElicitResult> =>
    this.#forward('elicitation', request.target, () =>
      this.server.server.elicitInput(request.params, this.#options(extra)),
    );

  /** Forwards a backend's sampling request to the client; the answer goes back as it came. */
  readonly sample = (
    request: BackendRequest<CreateMessageRequest['params']>,
    extra: { signal: AbortSignal },
  ): Promise<CreateMessageResult> =>
    this.#forward(
      'sampling',
      request.target,
      () =>
        this.server.server.createMessage(
          request.params,
          this.#options(extra),
        ) as Promise<CreateMessageResult>,
    );

  /** Writes a backend's log notification to stderr, one line, capped. */
  logFromBackend(entry: GatewayLogEntry): void {
    let text: string;
    try {
      text =
        typeof entry.data === 'string'
          ? entry.data
          : JSON.stringify(entry.data);
    } catch {
      text = String(entry.data);
    }
    text = (text ?? '').replace(/\s+/g, ' ');
    if (text.length > MAX_LOG_CHARS)
      text = `${text.slice(0, MAX_LOG_CHARS)}… (${text.length} characters)`;
    this.log(
      `backend "${entry.target}" ${String(entry.level).slice(0, 16)}${
        entry.logger === undefined
          ? ''
          : ` [${String(entry.logger).slice(0, 64)}]`
      }: ${text}`,
    );
  }

  /** A person answers: give them time (the backend's own request has its own timeout). */
  #options(extra: { signal: AbortSignal }) {
    return { signal: extra.signal, timeout: ANSWER_TIMEOUT_MS };
  }

  async #forward<R>(
    feature: InputFeature,
    target: string,
    send: () => Promise<R>,
  ): Promise<R> {
    this.#refuseUnanswerable(feature, target);
    this.log(
      `${feature}: backend "${target}" ${ASKS[feature]}; forwarded to the client`,
    );
    try {
      return await send();
    } catch (error) {
      const message = errorText(error);
      this.log(
        `${feature}: forwarding for backend "${target}" failed: ${message}`,
      );
      const code = (error as { code?: unknown } | null)?.code;
      throw rpcError(
        `Forwarding ${feature} to the broker's client failed: ${message}`,
        typeof code === 'number' && Number.isSafeInteger(code)
          ? code
          : ProtocolErrorCode.InternalError,
      );
    }
  }

  /** Throws the refusal when the client cannot be asked for `feature` now. */
  #refuseUnanswerable(feature: InputFeature, target: string): void {
    if (this.rounds?.modernClient === true) {
      // On 2026-07-28 a server asks only in its answer to a call.
      this.log(
        `${feature}: backend "${target}" asked outside a call in progress, and the client speaks MCP 2026-07-28; refused`,
      );
      throw rpcError(
        `The broker's MCP client speaks MCP 2026-07-28, where input is asked for only in the answer to a call, and this ${feature} request arrived outside a call in progress; refused by heretek-lazy-broker.`,
        ProtocolErrorCode.MethodNotFound,
      );
    }
    if (this.server.server.getClientCapabilities()?.[feature] === undefined) {
      this.log(
        `${feature}: backend "${target}" asked, but the client did not declare ${feature}; refused`,
      );
      throw notDeclared(feature);
    }
  }
}
