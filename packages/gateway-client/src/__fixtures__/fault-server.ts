/**
 * Test fixture: a hand-scripted Streamable HTTP server that completes the
 * 2025-11-25 handshake correctly and then misbehaves on purpose, one fault
 * per tool name. Used by the fault matrix test. Not shipped.
 */
import type { ServerResponse } from 'node:http';
import { listen, type Listening } from './servers.js';

/** The faults the server can inject, by tool name. */
export const FAULTS = [
  'drop-mid-stream',
  'garbage-sse',
  'garbage-json',
  'not-json-rpc',
  'wrong-id-json',
  'wrong-id-sse',
  'stream-50mb',
  'json-50mb',
  'never-answer',
  'status-500',
  'html',
  'stream-ends-early',
  'poll-then-resume',
  'reset-before-headers',
] as const;

/** One fault name. */
export type Fault = (typeof FAULTS)[number];

/** A running fault server. */
export type FaultServer = Listening & {
  /** Open TCP connections right now (server side). */
  openSockets: () => number;
  /** Bytes written by the 50 MB streams before the client hung up. */
  streamed: { bytes: number };
  /** Close the connections that carry no request now (as a server's keep-alive timeout does). */
  closeIdleConnections: () => void;
};

type Message = {
  jsonrpc: '2.0';
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
};

/** Answers with `status` and one body of `contentType`. */
function answer(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string,
): void {
  response.writeHead(status, { 'content-type': contentType }).end(body);
}

function sse(response: ServerResponse, messages: unknown[]): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
  });
  for (const message of messages)
    response.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  response.end();
}

/**
 * Start the fault server. Options: `sessionAlwaysLost` answers 404 to every
 * request that carries a session id; `cursorLoop` makes `tools/list` return
 * `nextCursor` forever (`'same'`: always the same cursor; `'alternate'`: A, B, A ...);
 * `listedTools` replaces the tools it lists.
 */
export async function startFaultServer(
  options: {
    sessionAlwaysLost?: boolean;
    cursorLoop?: 'same' | 'alternate' | 'endless';
    echoAuthorization?: boolean;
    discoverStatus?: number;
    /** The tools `tools/list` answers with, as given (default: one valid tool). */
    listedTools?: unknown[];
  } = {},
): Promise<FaultServer> {
  let sessionCounter = 0;
  const parked = new Map<string, number | string>();
  const streamed = { bytes: 0 };
  const openSockets = new Set<unknown>();
  const listening = await listen((request, response, body) => {
    const lastEventId = request.headers['last-event-id'];
    if (
      request.method === 'GET' &&
      typeof lastEventId === 'string' &&
      parked.has(lastEventId)
    ) {
      // 2025-11-25 SSE polling: the resumed stream delivers the parked response.
      const id = parked.get(lastEventId);
      parked.delete(lastEventId);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        `id: ${lastEventId}-done\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'resumed' }] } })}\n\n`,
      );
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const message = JSON.parse(body.toString('utf8')) as Message;
    const sessionId = request.headers['mcp-session-id'];
    if (
      message.method === 'server/discover' &&
      options.discoverStatus !== undefined
    ) {
      answer(
        response,
        options.discoverStatus,
        'text/plain',
        'internal error: not implemented',
      );
      return;
    }
    if (message.method === 'initialize') {
      sessionCounter += 1;
      response.setHeader('mcp-session-id', `session-${sessionCounter}`);
      sse(response, [
        {
          jsonrpc: '2.0',
          id: message.id,
          result: {
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 'fault-server', version: '1.0.0' },
          },
        },
      ]);
      return;
    }
    if (message.id === undefined) {
      response.writeHead(202).end();
      return;
    }
    if (sessionId === undefined) {
      response.writeHead(400, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32000,
            message: 'Bad Request: Server not initialized',
          },
        }),
      );
      return;
    }
    if (options.sessionAlwaysLost) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32001, message: 'Session not found' },
        }),
      );
      return;
    }
    if (message.method === 'tools/list') {
      const cursor = message.params?.cursor as string | undefined;
      let next: string;
      if (options.cursorLoop === 'alternate') next = cursor === 'A' ? 'B' : 'A';
      else if (options.cursorLoop === 'endless')
        next = String(Number(cursor ?? '0') + 1);
      else next = 'same';
      const tools = options.listedTools ?? [
        { name: `tool-${cursor ?? 'first'}`, inputSchema: { type: 'object' } },
      ];
      sse(response, [
        {
          jsonrpc: '2.0',
          id: message.id,
          result: options.cursorLoop ? { tools, nextCursor: next } : { tools },
        },
      ]);
      return;
    }
    const fault = (message.params?.name ?? '') as Fault;
    switch (fault) {
      case 'drop-mid-stream':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(
          `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"half"}}\n\n`,
        );
        response.write('event: message\ndata: {"jsonrpc":"2.0","id":');
        setTimeout(() => request.socket.destroy(), 20);
        return;
      case 'garbage-sse':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('event: message\ndata: {garbage\n\n');
        return; // left open: the client must not wait for more
      case 'garbage-json':
        answer(response, 200, 'application/json', '{"jsonrpc":"2.0","id":');
        return;
      case 'not-json-rpc':
        answer(response, 200, 'application/json', '{"hello":"world"}');
        return;
      case 'wrong-id-json':
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: Number(message.id) + 1000,
            result: { content: [] },
          }),
        );
        return;
      case 'wrong-id-sse':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: Number(message.id) + 1000, result: { content: [] } })}\n\n`,
        );
        return; // left open
      case 'stream-50mb': {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const line = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x'.repeat(64 * 1024) } })}\n\n`;
        const write = () => {
          while (streamed.bytes < 50 * 1024 * 1024) {
            streamed.bytes += line.length;
            if (!response.write(line)) {
              response.once('drain', write);
              return;
            }
          }
          response.end();
        };
        response.on('close', () => response.removeAllListeners('drain'));
        write();
        return;
      }
      case 'json-50mb':
        response.writeHead(200, {
          'content-type': 'application/json',
          'content-length': String(50 * 1024 * 1024),
        });
        response.write('{"jsonrpc":"2.0","id":');
        return; // the client must refuse on the announced length alone
      case 'never-answer':
        return; // no headers, no body
      case 'status-500': {
        const leaked = options.echoAuthorization
          ? ` (you sent ${request.headers.authorization ?? 'nothing'})`
          : '';
        response.writeHead(500, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: message.id,
            error: {
              code: -32603,
              message: `failed to send message: upstream exploded${leaked}`,
            },
          }),
        );
        return;
      }
      case 'html':
        answer(response, 200, 'text/html', '<html>login page</html>');
        return;
      case 'poll-then-resume': {
        // priming event with an id and a retry hint, then the server closes the stream
        const eventId = `prime-${String(message.id)}`;
        parked.set(eventId, message.id as number | string);
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`id: ${eventId}\nretry: 50\ndata: \n\n`);
        return;
      }
      case 'reset-before-headers':
        // the request arrived on an open connection, which is then reset (RST) with no answer
        request.socket.resetAndDestroy();
        return;
      case 'stream-ends-early':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(
          `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}\n\n`,
        );
        return;
      default:
        sse(response, [
          {
            jsonrpc: '2.0',
            id: message.id,
            result: { content: [{ type: 'text', text: 'ok' }] },
          },
        ]);
    }
  });
  listening.server.on('connection', (socket) => {
    openSockets.add(socket);
    socket.on('close', () => openSockets.delete(socket));
  });
  return {
    ...listening,
    openSockets: () => openSockets.size,
    streamed,
    closeIdleConnections: () => listening.server.closeIdleConnections(),
  };
}
