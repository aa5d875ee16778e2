import { randomUUID } from 'node:crypto';
import {
  ProtocolErrorCode,
  type CreateMessageResult,
  type ElicitResult,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { BrokerError } from './errors.js';
import { issueLines } from './issue-text.js';
import { errorText } from './error-text.js';
import type {
  BackendRequest,
  CallHandlers,
  CallProgress,
  ToolCallResult,
} from './types.js';

/** The embedded request kinds a backend may ask for during a call. */
export type InputMethod = 'elicitation/create' | 'sampling/createMessage';

/** The MCP 2026-07-28 `input_required` answer to a `tools/call`. */
export type InputRequiredAnswer = {
  resultType: 'input_required';
  inputRequests: Record<string, { method: InputMethod; params: unknown }>;
  requestState: string;
};

/** Most calls waiting for the client's answers at once; beyond it a backend's request is refused. */
export const MAX_PENDING_CALLS = 16;
/** How long a call waits for the client's retry with the answers before it is given up: a person answers, so ten minutes. */
export const ANSWER_TIMEOUT_MS = 600_000;

/** JSON-RPC "request cancelled" (as in LSP; not in the SDK's code table): a request its backend withdrew. Nobody reads the answer. */
const REQUEST_CANCELLED = -32800;

/** An error that the SDK answers a backend's request with, as JSON-RPC error `code`. */
export const rpcError = (message: string, code: number): Error =>
  Object.assign(new Error(message), { code });

export type InputFeature = 'elicitation' | 'sampling';

/** The refusal of a backend's request when the broker's client did not declare the feature: what such a client would answer itself (Method not found). */
export function notDeclared(feature: InputFeature): Error {
  return rpcError(
    `The broker's MCP client does not support ${feature} (it did not declare the capability), so nobody can answer; refused by heretek-lazy-broker.`,
    ProtocolErrorCode.MethodNotFound,
  );
}

type Ask = {
  key: string;
  method: InputMethod;
  params: unknown;
  sent: boolean;
  resolve: (answer: unknown) => void;
  reject: (error: Error) => void;
};

type Outcome =
  { ok: true; result: ToolCallResult } | { ok: false; error: unknown };

/** What a client declared in its request's envelope. */
export type RoundCapabilities = { elicitation: boolean; sampling: boolean };

/** One `mcp_call_tool` from a 2026-07-28 client: the backend's call runs on, each of its asks handed to the client in an `input_required` answer. */
export class PendingCall {
  readonly id = randomUUID();
  readonly controller = new AbortController();
  #asks = new Map<string, Ask>();
  #counter = 0;
  #outcome: Outcome | undefined;
  #ended = false;
  #wake: () => void = () => {};
  /** Where the backend's progress goes in the current round (nowhere between rounds). */
  progress: ((progress: CallProgress) => void) | undefined;

  constructor(
    readonly name: string,
    public capabilities: RoundCapabilities,
    private readonly accepting: () => boolean,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Hands the backend's elicitation to the client in an `input_required` answer. */
  readonly onElicitation = this.#relay<ElicitResult>('elicitation/create');
  /** Hands the backend's sampling request to the client in an `input_required` answer. */
  readonly onSampling = this.#relay<CreateMessageResult>(
    'sampling/createMessage',
  );

  /** The call's handler of `method`: logged, asked, its answer checked by shape in {@link answer}. */
  #relay<Result>(method: InputMethod) {
    const feature = featureOf(method);
    return async (
      request: BackendRequest<unknown>,
      extra: { signal: AbortSignal },
    ): Promise<Result> => {
      this.log(
        `${feature}: backend "${request.target}" ${ASKS[feature]}; handed to the client in an input_required answer`,
      );
      try {
        return (await this.ask(
          method,
          request.params,
          request.target,
          extra.signal,
        )) as Result;
      } catch (error) {
        this.log(
          `${feature}: forwarding for backend "${request.target}" failed: ${errorText(error)}`,
        );
        throw error;
      }
    };
  }

  readonly onProgress = (progress: CallProgress): void =>
    this.progress?.(progress);

  /** Records how the backend's call ended. */
  settle(outcome: Outcome): void {
    this.#outcome = outcome;
    this.#ended = true;
    this.#wake();
  }

  /** A backend asks for input: refused at once without the client's capability or beyond the waiting calls' limit; else answered by the client's retry. */
  ask(
    method: InputMethod,
    params: unknown,
    target: string,
    signal: AbortSignal,
  ): Promise<unknown> {
    const feature = featureOf(method);
    if (!this.capabilities[feature])
      return Promise.reject(notDeclared(feature));
    if (this.#ended)
      return Promise.reject(
        rpcError(
          `The ${feature} request of backend "${target}" arrived after the call it belongs to ended; refused by heretek-lazy-broker.`,
          ProtocolErrorCode.InternalError,
        ),
      );
    if (!this.accepting())
      return Promise.reject(
        rpcError(
          `Too many calls already wait for the client's answers; ${feature} for backend "${target}" refused by heretek-lazy-broker.`,
          ProtocolErrorCode.InternalError,
        ),
      );
    this.#counter += 1;
    const key = `${feature}-${this.#counter}`;
    return new Promise<unknown>((resolve, reject) => {
      const ask: Ask = { key, method, params, sent: false, resolve, reject };
      this.#asks.set(key, ask);
      const abandon = () => {
        if (this.#asks.delete(key))
          reject(
            rpcError(
              `The backend withdrew its ${feature} request.`,
              REQUEST_CANCELLED,
            ),
          );
      };
      if (signal.aborted) abandon();
      else signal.addEventListener('abort', abandon, { once: true });
      this.#wake();
    });
  }

  /** Hands a retry's `inputResponses` to the asks they answer; an answer of the wrong shape fails its ask with a JSON-RPC error. */
  answer(responses: Record<string, unknown> | undefined): void {
    for (const [key, ask] of this.#asks) {
      if (!ask.sent || responses === undefined || !(key in responses)) continue;
      this.#asks.delete(key);
      const response = responses[key];
      const problem = shapeProblem(ask.method, response);
      if (problem === undefined) ask.resolve(response);
      else ask.reject(rpcError(problem, ProtocolErrorCode.InvalidParams));
    }
  }

  /**
   * Waits until the backend's call ends (its result) or it asks for input
   * nobody has been asked for yet (the `input_required` answer, which also
   * repeats the asks still unanswered). On a retry (`retried`), asks the
   * retry did not answer are asked again at once.
   */
  async next(
    signal: AbortSignal,
    retried: boolean,
  ): Promise<Outcome | InputRequiredAnswer> {
    for (;;) {
      if (this.#outcome !== undefined) return this.#outcome;
      const unanswered = [...this.#asks.values()];
      // A retry that left asks unanswered gets them again, never a wait.
      if (
        unanswered.some((ask) => !ask.sent) ||
        (retried && unanswered.length > 0)
      ) {
        // Requests a backend sends together go to the client together.
        await new Promise((resolve) => setImmediate(resolve));
        const inputRequests: InputRequiredAnswer['inputRequests'] = {};
        for (const ask of this.#asks.values()) {
          ask.sent = true;
          inputRequests[ask.key] = { method: ask.method, params: ask.params };
        }
        return {
          resultType: 'input_required',
          inputRequests,
          requestState: this.id,
        };
      }
      if (signal.aborted) throw signal.reason;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  }

  /** Gives the call up: every open ask fails, the backend's call is aborted. */
  abandon(reason: string): void {
    this.#ended = true;
    for (const ask of this.#asks.values())
      ask.reject(rpcError(reason, ProtocolErrorCode.InternalError));
    this.#asks.clear();
    this.controller.abort(new Error(reason));
    this.#wake();
  }
}

/** What the log says a backend does when it sends a request of each feature. */
export const ASKS: Record<InputFeature, string> = {
  elicitation: 'asks the user',
  sampling: "asks the client's model",
};

function featureOf(method: InputMethod): InputFeature {
  return method === 'elicitation/create' ? 'elicitation' : 'sampling';
}

/** What a client's answer must hold before it goes to the backend (other fields pass through as sent). */
const ANSWER_SCHEMAS: Record<InputMethod, z.ZodType> = {
  'elicitation/create': z.looseObject({
    action: z.enum(['accept', 'decline', 'cancel'], {
      error: 'one of accept, decline or cancel',
    }),
  }),
  'sampling/createMessage': z.looseObject({
    role: z.string({ error: 'a string (user or assistant)' }),
    content: z.union([z.looseObject({}), z.array(z.unknown())], {
      error: 'a content block or a list of them',
    }),
  }),
};

/** Why the client's answer to `method` cannot go to the backend, or `undefined`. */
function shapeProblem(
  method: InputMethod,
  response: unknown,
): string | undefined {
  const parsed = ANSWER_SCHEMAS[method].safeParse(response);
  if (parsed.success) return undefined;
  return `The client's answer to ${method} is not usable: ${issueLines({
    issues: parsed.error.issues,
    input: response,
    root: 'answer',
  }).join('; ')}.`;
}

/**
 * Multi round-trip input (MCP 2026-07-28) for calls through the broker. A
 * backend's `elicitation/create` or `sampling/createMessage` during a call
 * from a 2026-07-28 client becomes an `input_required` answer to
 * `mcp_call_tool`; the backend's call stays open (at most
 * {@link MAX_PENDING_CALLS} calls, each for at most {@link ANSWER_TIMEOUT_MS}
 * between rounds) until the client retries with `inputResponses` and the
 * `requestState` it got. The broker never answers for the user.
 */
export class InputRounds {
  readonly #waiting = new Map<
    string,
    { call: PendingCall; timer: NodeJS.Timeout }
  >();
  #modern = false;
  constructor(private readonly log?: (line: string) => void) {}

  /** Whether the client has sent a 2026-07-28 call (it cannot take server-to-client requests). */
  get modernClient(): boolean {
    return this.#modern;
  }

  /** Calls waiting for the client's retry now. */
  get pending(): number {
    return this.#waiting.size;
  }

  /**
   * Answers one round of a `mcp_call_tool` from a 2026-07-28 client: the
   * first starts the backend call with `start` (which passes the handlers to
   * the gateway); a retry resumes the call its `requestState` names.
   */
  async round(options: {
    name: string;
    capabilities: RoundCapabilities;
    requestState: string | undefined;
    inputResponses: Record<string, unknown> | undefined;
    signal: AbortSignal;
    onProgress: ((progress: CallProgress) => void) | undefined;
    start: (
      signal: AbortSignal,
      handlers: CallHandlers,
    ) => Promise<ToolCallResult>;
  }): Promise<ToolCallResult | InputRequiredAnswer> {
    this.#modern = true;
    let call: PendingCall;
    if (options.requestState === undefined) {
      call = new PendingCall(
        options.name,
        options.capabilities,
        () => this.#waiting.size < MAX_PENDING_CALLS,
        this.log,
      );
      const started = options.start(call.controller.signal, {
        ...(options.onProgress === undefined
          ? {}
          : { onProgress: call.onProgress }),
        onElicitation: call.onElicitation,
        onSampling: call.onSampling,
      });
      started.then(
        (result) => call.settle({ ok: true, result }),
        (error: unknown) => call.settle({ ok: false, error }),
      );
    } else {
      const waiting = this.#waiting.get(options.requestState);
      if (waiting === undefined || waiting.call.name !== options.name)
        throw new BrokerError({
          code: 'INVALID_ARGUMENTS',
          toolName: options.name,
          message: `Unknown or expired requestState for ${options.name}: the call it named ended, timed out (${ANSWER_TIMEOUT_MS / 1000} s without an answer) or belongs to another tool. Call the tool again without requestState.`,
        });
      clearTimeout(waiting.timer);
      this.#waiting.delete(options.requestState);
      call = waiting.call;
      call.capabilities = options.capabilities;
      call.answer(options.inputResponses);
    }
    // The client cancelling this round cancels the backend's call.
    const cancel = () => call.abandon('The client cancelled the call.');
    options.signal.addEventListener('abort', cancel, { once: true });
    call.progress = options.onProgress;
    try {
      const next = await call.next(
        options.signal,
        options.requestState !== undefined,
      );
      if ('resultType' in next) {
        const timer = setTimeout(() => {
          this.#waiting.delete(call.id);
          call.abandon(
            `The client did not answer within ${ANSWER_TIMEOUT_MS / 1000} s; heretek-lazy-broker gave the call up.`,
          );
        }, ANSWER_TIMEOUT_MS);
        timer.unref();
        this.#waiting.set(call.id, { call, timer });
        return next;
      }
      if (next.ok) return next.result;
      throw next.error;
    } finally {
      call.progress = undefined;
      options.signal.removeEventListener('abort', cancel);
    }
  }

  /** Gives up every waiting call (the broker is closing). */
  close(): void {
    for (const { call, timer } of this.#waiting.values()) {
      clearTimeout(timer);
      call.abandon('heretek-lazy-broker is closing.');
    }
    this.#waiting.clear();
  }
}
