/**
 * End to end with the real @a2a-js/sdk on 127.0.0.1: an SDK A2A server
 * (DefaultRequestHandler + JsonRpcTransportHandler behind node:http) built
 * from our agent card receives handoffs sent by the SDK client, which found
 * the server through the same card at /.well-known/agent-card.json.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AgentCard as SdkAgentCard,
  Message as SdkMessage,
  SendMessageRequest,
  type Message,
} from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  defaultServerCallContextBuilder,
  validateVersion,
  type AgentExecutor,
} from '@a2a-js/sdk/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_CARD_WELL_KNOWN_PATH,
  HandoffError,
  agentCardFor,
  createHandoff,
  handoffDigest,
  handoffFromA2AMessage,
  handoffToA2AMessage,
  type AgentCardV1,
} from './index.js';

const ROLE = 'staff-backend';

/** The receiving agent: parses the handoff strictly and answers with a one-line verdict. */
const executor: AgentExecutor = {
  async execute(requestContext, eventBus) {
    let verdict: string;
    try {
      const envelope = handoffFromA2AMessage(
        SdkMessage.toJSON(requestContext.userMessage),
      );
      verdict =
        envelope.to === ROLE
          ? `accepted ${handoffDigest(envelope)}`
          : `refused NOT_FOR_ME`;
    } catch (error) {
      verdict = `refused ${HandoffError.isInstance(error) ? error.code : 'UNEXPECTED'}`;
    }
    eventBus.publish(
      AgentEvent.message(
        SdkMessage.fromJSON({
          messageId: `reply-${requestContext.userMessage.messageId}`,
          contextId: requestContext.contextId,
          role: 'ROLE_AGENT',
          parts: [{ text: verdict }],
        }),
      ),
    );
    eventBus.finished();
  },
  async cancelTask() {},
};

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('handoffs between SDK client and SDK server, wired by our agent card', () => {
  let server: Server;
  let origin: string;
  let card: AgentCardV1;
  let transport: JsonRpcTransportHandler | undefined;
  let handler: DefaultRequestHandler | undefined;

  beforeAll(async () => {
    server = createServer((request, response) => {
      void (async () => {
        if (
          request.method === 'GET' &&
          request.url === AGENT_CARD_WELL_KNOWN_PATH
        ) {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify(card));
          return;
        }
        if (
          request.method === 'POST' &&
          request.url === `/a2a/${ROLE}` &&
          transport &&
          handler
        ) {
          const requestedVersion = request.headers['a2a-version'] as
            string | undefined;
          const context = defaultServerCallContextBuilder({
            extensions: [],
            user: new UnauthenticatedUser(),
            headers: request.headers,
            requestedVersion,
          });
          validateVersion(
            context.requestedVersion,
            await handler.getAgentCard(),
            'JSONRPC',
          );
          const reply = await transport.handle(
            await readBody(request),
            context,
          );
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify(reply));
          return;
        }
        response.writeHead(404).end();
      })().catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
    });
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    card = agentCardFor(ROLE, { baseUrl: `${origin}/a2a` });
    handler = new DefaultRequestHandler(
      SdkAgentCard.fromJSON(card),
      new InMemoryTaskStore(),
      executor,
    );
    transport = new JsonRpcTransportHandler(handler);
  });

  afterAll(async () => {
    if (!server?.listening) return;
    server.closeAllConnections(); // keep-alive sockets of the SDK client must not hold the close
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function send(message: unknown): Promise<string> {
    const client = await new ClientFactory().createFromUrl(origin);
    const result = await client.sendMessage(
      SendMessageRequest.fromJSON({ message }),
    );
    const reply = result as Message;
    const part = reply.parts[0]?.content;
    return part?.$case === 'text' ? part.value : JSON.stringify(result);
  }

  /** A handoff from the director to the receiving role. */
  const fromDirector = (
    intent: 'mutating' | 'read-only',
    title: string,
    contextSummary = '',
  ) =>
    createHandoff({
      from: 'director',
      to: ROLE,
      intent,
      task: { title },
      contextSummary,
    });

  it('delivers a valid handoff and the receiver sees the same digest', async () => {
    const envelope = fromDirector(
      'mutating',
      'Add rate limiting to POST /login',
      'QA saw brute force in the logs.',
    );
    expect(await send(handoffToA2AMessage({ envelope }))).toBe(
      `accepted ${handoffDigest(envelope)}`,
    );
  });

  it('lets the receiver refuse a tampered envelope and mutating work for a read-only role', async () => {
    const envelope = fromDirector('read-only', 'Explain the session store');
    const message = handoffToA2AMessage({ envelope });
    const tampered = {
      ...message,
      parts: [
        {
          ...message.parts[0],
          data: { ...envelope, contextSummary: 'edited' },
        },
      ],
    };
    expect(await send(tampered)).toBe('refused DIGEST_MISMATCH');

    const forbidden = {
      messageId: 'm-forbidden',
      role: 'ROLE_USER',
      parts: [
        {
          ...message.parts[0],
          data: { ...envelope, to: 'qa-adversary', intent: 'mutating' },
        },
      ],
    };
    expect(await send(forbidden)).toBe('refused READ_ONLY_RECIPIENT');
  });
});
