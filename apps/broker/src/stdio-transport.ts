import type { Readable, Writable } from 'node:stream';
import {
  ProtocolErrorCode,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  type JSONRPCMessage,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { EnvelopeGuard } from './envelope-guard.js';
import { LineLimit } from './line-limit.js';

/** Longest request line read from stdin; a longer one is dropped and answered with an error. */
export const MAX_REQUEST_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/** Longest JSON-RPC error message sent, in characters; longer ones are cut with their length noted. */
const MAX_ERROR_MESSAGE_CHARS = 1_000;

/**
 * The SDK's stdio server transport with the broker's guards around it:
 * - a request line over {@link MAX_REQUEST_LINE_BYTES} is dropped (and
 *   answered, when its id shows) instead of reaching the SDK's reader, which
 *   would close the transport;
 * - a request line the SDK's reader would drop without a word (a usable id
 *   but an envelope its schema refuses) is answered with Invalid Request;
 * - the SDK's own JSON-RPC error messages quote the request (an unknown tool
 *   name, a bad parameter), so every error message sent is capped;
 * - the first `tools/list` answer is reported, so work that must not delay
 *   the first answer can start after it.
 */
export class BrokerStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];

  readonly #inner: StdioServerTransport;
  readonly #log: (line: string) => void;
  #onFirstToolsList: (() => void) | undefined;

  constructor(options: {
    stdin: Readable;
    stdout: Writable;
    /** Where dropped and refused request lines are noted. */
    log: (line: string) => void;
    /** Called once, after the first `tools/list` answer has been written. */
    onFirstToolsList?: () => void;
  }) {
    this.#log = options.log;
    this.#onFirstToolsList = options.onFirstToolsList;
    const lines = options.stdin
      .pipe(
        new LineLimit(MAX_REQUEST_LINE_BYTES, (line) => this.#dropped(line)),
      )
      .pipe(new EnvelopeGuard((request) => this.#rejected(request)));
    this.#inner = new StdioServerTransport(lines, options.stdout, {
      maxBufferSize: MAX_REQUEST_LINE_BYTES + 64 * 1024,
    });
    this.#inner.onclose = () => this.onclose?.();
    this.#inner.onerror = (error) => this.onerror?.(error);
    this.#inner.onmessage = (message) => this.onmessage?.(message);
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  async send(
    message: JSONRPCMessage,
    _options?: TransportSendOptions,
  ): Promise<void> {
    await this.#inner.send(capErrorMessage(message));
    if (this.#onFirstToolsList !== undefined && isToolsListAnswer(message)) {
      const onFirstToolsList = this.#onFirstToolsList;
      this.#onFirstToolsList = undefined;
      onFirstToolsList();
    }
  }

  #dropped({ bytes, id }: { bytes: number; id: string | number | undefined }) {
    this.#log(
      `request line of ${bytes} bytes dropped: the limit is ${MAX_REQUEST_LINE_BYTES} bytes${
        id === undefined ? ' (no id found: not answered)' : ''
      }`,
    );
    if (id !== undefined)
      this.#refuse(
        id,
        `Request too large: ${bytes} bytes in one line; the limit is ${MAX_REQUEST_LINE_BYTES} bytes. Nothing was done.`,
      );
  }

  #rejected({ id, problem }: { id: string | number; problem: string }) {
    this.#log(`invalid request ${JSON.stringify(id)} answered: ${problem}`);
    this.#refuse(id, `Invalid Request: ${problem}. Nothing was done.`);
  }

  #refuse(id: string | number, message: string): void {
    this.#inner
      .send({
        jsonrpc: '2.0',
        id,
        error: { code: ProtocolErrorCode.InvalidRequest, message },
      })
      .catch(() => {});
  }
}

function isToolsListAnswer(message: JSONRPCMessage): boolean {
  return (
    'result' in message &&
    'tools' in message.result &&
    Array.isArray(message.result.tools)
  );
}

function capErrorMessage(message: JSONRPCMessage): JSONRPCMessage {
  if (
    !('error' in message) ||
    message.error.message.length <= MAX_ERROR_MESSAGE_CHARS
  )
    return message;
  const text = message.error.message;
  return {
    ...message,
    error: {
      ...message.error,
      message: `${text.slice(0, MAX_ERROR_MESSAGE_CHARS)}… (${text.length} characters)`,
    },
  };
}
