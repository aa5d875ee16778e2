import type {
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
  McpServer,
} from '@modelcontextprotocol/server';
import type { InputRounds } from './input-rounds.js';

/** A backend's server-to-client request during a call, as the gateway client hands it over. */
type FromBackend<Params> = { target: string; params: Params };

/** Longest backend log text written to stderr, in characters. */
const MAX_LOG_CHARS = 2_000;

/** JSON-RPC "method not found": what a client without the capability would answer. */
const METHOD_NOT_FOUND = -32601;

function refusal(message: string): Error {
  return Object.assign(new Error(message), { code: METHOD_NOT_FOUND });
}

/**
 * Carries what a backend sends back during a call to where it belongs:
 * `elicitation/create` and `sampling/createMessage` to the broker's own MCP
 * client when that client declared the capability (and refused at once with
 * JSON-RPC error -32601 when it did not: the broker never answers for the
 * user), and `notifications/message` to the broker's stderr log, with its
 * level and the backend named. Attach the MCP server before serving.
 */
export class ClientBridge {
  #server: McpServer | undefined;
  readonly #log: (line: string) => void;
  readonly #rounds: InputRounds | undefined;

  /** With `rounds`, requests during a 2026-07-28 client's call go back in its `input_required` answer. */
  constructor(log: (line: string) => void, rounds?: InputRounds) {
    this.#log = log;
    this.#rounds = rounds;
  }

  /** The server whose client the requests go to. */
  attach(server: McpServer): void {
    this.#server = server;
  }

  /** Forwards a backend's elicitation to the client; the answer goes back as it came. */
  readonly elicit = async (
    request: FromBackend<ElicitRequest['params']>,
    extra: { signal: AbortSignal },
  ): Promise<ElicitResult> => {
    const call = this.#rounds?.current();
    if (call !== undefined) {
      this.#log(
        `elicitation: backend "${request.target}" asks the user; handed to the client in an input_required answer`,
      );
      try {
        return (await call.ask(
          'elicitation/create',
          request.params,
          request.target,
          extra.signal,
        )) as ElicitResult;
      } catch (error) {
        throw this.#failed('elicitation', request.target, error);
      }
    }
    const server = this.#client('elicitation', request.target);
    this.#log(
      `elicitation: backend "${request.target}" asks the user; forwarded to the client`,
    );
    try {
      return await server.server.elicitInput(request.params, {
        signal: extra.signal,
        // A person answers this one: give them time (the backend's own request has its own timeout).
        timeout: 600_000,
      });
    } catch (error) {
      throw this.#failed('elicitation', request.target, error);
    }
  };

  /** Forwards a backend's sampling request to the client; the answer goes back as it came. */
  readonly sample = async (
    request: FromBackend<CreateMessageRequest['params']>,
    extra: { signal: AbortSignal },
  ): Promise<CreateMessageResult> => {
    const call = this.#rounds?.current();
    if (call !== undefined) {
      this.#log(
        `sampling: backend "${request.target}" asks the client's model; handed to the client in an input_required answer`,
      );
      try {
        return (await call.ask(
          'sampling/createMessage',
          request.params,
          request.target,
          extra.signal,
        )) as CreateMessageResult;
      } catch (error) {
        throw this.#failed('sampling', request.target, error);
      }
    }
    const server = this.#client('sampling', request.target);
    this.#log(
      `sampling: backend "${request.target}" asks the client's model; forwarded`,
    );
    try {
      return (await server.server.createMessage(request.params, {
        signal: extra.signal,
        timeout: 600_000,
      })) as CreateMessageResult;
    } catch (error) {
      throw this.#failed('sampling', request.target, error);
    }
  };

  /** Writes a backend's log notification to stderr, one line, capped. */
  readonly logFromBackend = (entry: {
    target: string;
    level: string;
    logger?: string;
    data: unknown;
  }): void => {
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
    this.#log(
      `backend "${entry.target}" ${String(entry.level).slice(0, 16)}${
        entry.logger === undefined
          ? ''
          : ` [${String(entry.logger).slice(0, 64)}]`
      }: ${text}`,
    );
  };

  #client(feature: 'elicitation' | 'sampling', target: string): McpServer {
    const server = this.#server;
    if (this.#rounds?.modernClient === true) {
      // On 2026-07-28 a server asks only in its answer to a call.
      this.#log(
        `${feature}: backend "${target}" asked outside a call in progress, and the client speaks MCP 2026-07-28; refused`,
      );
      throw refusal(
        `The broker's MCP client speaks MCP 2026-07-28, where input is asked for only in the answer to a call, and this ${feature} request arrived outside a call in progress; refused by heretek-lazy-broker.`,
      );
    }
    const capabilities = server?.server.getClientCapabilities();
    if (server === undefined || capabilities?.[feature] === undefined) {
      this.#log(
        `${feature}: backend "${target}" asked, but the client did not declare ${feature}; refused`,
      );
      throw refusal(
        `The broker's MCP client does not support ${feature} (it did not declare the capability), so nobody can answer; refused by heretek-lazy-broker.`,
      );
    }
    return server;
  }

  #failed(feature: string, target: string, error: unknown): Error {
    const message = error instanceof Error ? error.message : String(error);
    this.#log(
      `${feature}: forwarding for backend "${target}" failed: ${message}`,
    );
    const code = (error as { code?: unknown } | null)?.code;
    return Object.assign(
      new Error(
        `Forwarding ${feature} to the broker's client failed: ${message}`,
      ),
      {
        code:
          typeof code === 'number' && Number.isSafeInteger(code)
            ? code
            : -32603,
      },
    );
  }
}
