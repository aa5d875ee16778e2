/**
 * Test fixture, not a product: a loopback stand-in for a model provider that
 * records every request and scripts tool calls. It answers the Anthropic
 * Messages API (`POST /v1/messages`, SSE) and the OpenAI Chat Completions API
 * (`POST /v1/chat/completions`, SSE), which is all OpenCode and Claude Code
 * need from a provider to run an agent loop.
 *
 * The script travels in the conversation itself: each line of the latest user
 * text of the form `@tool <name> <json>` ({@link scriptLine}) is one tool
 * call. The stand-in answers the first request after that text with the first
 * such call, the request that carries its result with the second, and so on;
 * once every call has been made it answers with plain text. A delegation
 * (OpenCode's task tool, Claude Code's Agent tool) whose `prompt` holds
 * `@tool` lines scripts the subagent the same way.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the stand-in received it. */
export type RecordedRequest = {
  api: 'anthropic' | 'openai';
  path: string;
  body: Record<string, unknown>;
  /** The raw body, byte for byte. */
  raw: string;
  /** `Date.now()` when the request arrived and when its answer was sent. */
  receivedAt: number;
  answeredAt: number;
};

/** A running stand-in. */
export type ModelStandIn = {
  /** Base URL to give OpenCode's provider (`.../v1`). */
  baseURL: string;
  requests: RecordedRequest[];
  close: () => Promise<void>;
};

/** The requests of agents (those that carry tools), without OpenCode's title requests. */
export function agentRequests(
  requests: readonly RecordedRequest[],
): RecordedRequest[] {
  return requests.filter(
    (r) => Array.isArray(r.body.tools) && (r.body.tools as []).length > 0,
  );
}

/** Tool results the model received in an Anthropic request, as text. */
export function toolResults(request: RecordedRequest): string[] {
  return ((request.body.messages ?? []) as Message[]).flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Array<{ type: string; content?: unknown }>)
          .filter((b) => b.type === 'tool_result')
          .map((b) =>
            typeof b.content === 'string'
              ? b.content
              : JSON.stringify(b.content),
          )
      : [],
  );
}

type Message = { role: string; content: unknown };
type Block = { type: string; text?: string; tool_use_id?: string };

const DIRECTIVE = /^@tool (\S+) (.+)$/;

/** The script line of one tool call: `@tool <name> <json>`. */
export const scriptLine = (name: string, input: unknown): string =>
  `@tool ${name} ${JSON.stringify(input)}`;

/**
 * The script line of a delegation that hands `prompt` to a subagent: OpenCode's
 * `task` tool and Claude Code's `Agent` tool take the same input.
 */
export const delegationLine = (options: {
  tool: 'task' | 'Agent';
  /** What the work is for, in the call's description. */
  role: string;
  /** The agent's name (default `role`). */
  subagentType?: string;
  prompt: string;
}): string =>
  scriptLine(options.tool, {
    description: `work for ${options.role}`,
    prompt: options.prompt,
    subagent_type: options.subagentType ?? options.role,
  });

/**
 * The `@tool` lines of a text, in order. `opencode run` wraps a message that
 * contains spaces in double quotes and puts a backslash before each double
 * quote inside; such a message is read unwrapped.
 */
export function scriptedCalls(
  text: string,
): Array<{ name: string; input: unknown }> {
  const calls: Array<{ name: string; input: unknown }> = [];
  const trimmed = text.trim();
  const unquoted =
    trimmed.startsWith('"') && trimmed.endsWith('"')
      ? trimmed.slice(1, -1).replaceAll('\\"', '"')
      : text;
  for (const line of unquoted.split('\n')) {
    const match = DIRECTIVE.exec(line.trim());
    if (match === null) continue;
    calls.push({ name: match[1]!, input: JSON.parse(match[2]!) });
  }
  return calls;
}

/** Text of a message's content (a string or text blocks). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Block[])
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

/**
 * What to answer next: the next scripted call after the latest user text, or
 * text when the script is done. `isResult` tells a tool result from user text.
 */
function nextStep(
  messages: Message[],
  isResult: (message: Message) => boolean,
): { call?: { name: string; input: unknown }; text: string } {
  let done = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'user' && !isResult(message)) {
      const calls = scriptedCalls(textOf(message.content));
      const call = calls[done];
      return call === undefined
        ? { text: `done after ${done} calls` }
        : { call, text: '' };
    }
    if (isResult(message)) done += 1;
  }
  return { text: 'nothing to do' };
}

const anthropicResult = (m: Message) =>
  m.role === 'user' &&
  Array.isArray(m.content) &&
  (m.content as Block[]).some((b) => b.type === 'tool_result');

function sse(events: Array<[string | undefined, unknown]>): string {
  return events
    .map(
      ([event, data]) =>
        `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`,
    )
    .join('');
}

let idCounter = 0;

/**
 * The script's next step for a request: a request without tools (the
 * session title) is answered with a fixed text.
 */
function stepFor(
  body: Record<string, unknown>,
  isResult: (m: Message) => boolean,
): ReturnType<typeof nextStep> {
  const tools = (body.tools ?? []) as unknown[];
  return tools.length === 0
    ? { text: 'Scripted session' }
    : nextStep((body.messages ?? []) as Message[], isResult);
}

/** The three events of the answer's one content block. */
const contentBlock = (
  start: Record<string, unknown>,
  delta: Record<string, unknown>,
): Array<[string, unknown]> => [
  [
    'content_block_start',
    { type: 'content_block_start', index: 0, content_block: start },
  ],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
];

function anthropicAnswer(body: Record<string, unknown>): string {
  const step = stepFor(body, anthropicResult);
  const id = `msg_${++idCounter}`;
  const usage = { input_tokens: 10, output_tokens: 5 };
  const events: Array<[string, unknown]> = [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      },
    ],
  ];
  events.push(
    ...(step.call === undefined
      ? contentBlock(
          { type: 'text', text: '' },
          { type: 'text_delta', text: step.text },
        )
      : contentBlock(
          {
            type: 'tool_use',
            id: `toolu_${idCounter}`,
            name: step.call.name,
            input: {},
          },
          {
            type: 'input_json_delta',
            partial_json: JSON.stringify(step.call.input),
          },
        )),
  );
  events.push(
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: {
          stop_reason: step.call === undefined ? 'end_turn' : 'tool_use',
          stop_sequence: null,
        },
        usage: { output_tokens: 5 },
      },
    ],
    ['message_stop', { type: 'message_stop' }],
  );
  return sse(events);
}

const openaiResult = (m: Message) => m.role === 'tool';

function openaiAnswer(body: Record<string, unknown>): string {
  const step = stepFor(body, openaiResult);
  const id = `chatcmpl_${++idCounter}`;
  const chunk = (delta: unknown, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    created: 0,
    model: body.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events: Array<[undefined, unknown]> =
    step.call === undefined
      ? [
          [undefined, chunk({ role: 'assistant', content: step.text }, null)],
          [undefined, chunk({}, 'stop')],
        ]
      : [
          [
            undefined,
            chunk(
              {
                role: 'assistant',
                tool_calls: [
                  {
                    index: 0,
                    id: `call_${idCounter}`,
                    type: 'function',
                    function: {
                      name: step.call.name,
                      arguments: JSON.stringify(step.call.input),
                    },
                  },
                ],
              },
              null,
            ),
          ],
          [undefined, chunk({}, 'tool_calls')],
        ];
  return `${sse(events)}data: [DONE]\n\n`;
}

/** Starts the stand-in on a random 127.0.0.1 port. */
export async function startModelStandIn(): Promise<ModelStandIn> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const receivedAt = Date.now();
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        res.writeHead(400).end('body is not JSON');
        return;
      }
      const api = path.endsWith('/messages')
        ? 'anthropic'
        : path.endsWith('/chat/completions')
          ? 'openai'
          : undefined;
      if (req.method !== 'POST' || api === undefined) {
        res.writeHead(404).end();
        return;
      }
      const recorded: RecordedRequest = {
        api,
        path,
        body,
        raw,
        receivedAt,
        answeredAt: 0,
      };
      requests.push(recorded);
      let answer: string;
      try {
        answer =
          api === 'anthropic' ? anthropicAnswer(body) : openaiAnswer(body);
      } catch (error) {
        res.writeHead(500).end(`stand-in script error: ${String(error)}`);
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
      });
      recorded.answeredAt = Date.now();
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve()),
  );
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
