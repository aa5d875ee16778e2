import { describe, expect, it } from 'vitest';
import { GatewayClient } from './gateway-client.js';
import type { GatewayError } from './errors.js';
import { GatewayErrorCode, type GatewayHttpError } from './errors.js';
import {
  startSessionfulServer,
  type SessionfulServer,
} from './__fixtures__/servers.js';
import {
  startTestGateway,
  type TestGateway,
} from './__fixtures__/test-gateway.js';
import { closeAfterEach } from './__fixtures__/cleanups.js';
import { requestsOf } from './__fixtures__/requests.js';

const { track } = closeAfterEach();

async function setup(
  options: { deny?: string[]; pageSize?: number } = {},
): Promise<{
  gateway: TestGateway;
  client: GatewayClient;
  alpha: SessionfulServer;
  beta: SessionfulServer;
}> {
  const alpha = await startSessionfulServer({ name: 'alpha' });
  const beta = await startSessionfulServer({ name: 'beta', generatedTools: 3 });
  const gateway = await startTestGateway({
    targets: { alpha: `${alpha.url}/mcp`, beta: `${beta.url}/mcp` },
    ...options,
  });
  const client = new GatewayClient({
    url: gateway.url,
    mode: 'multiplexed',
    role: 'director',
    timeoutMs: 5_000,
  });
  track(alpha);
  track(beta);
  track(gateway);
  track(client);
  return { gateway, client, alpha, beta };
}

describe('multiplexed mode through an agentgateway-like gateway', () => {
  it('lists /mcp once and groups tools by target, split at the first underscore', async () => {
    const { gateway, client } = await setup();
    const [alphaTools, betaTools] = await Promise.all([
      client.listTools({ target: 'alpha' }),
      client.listTools({ target: 'beta' }),
    ]);
    expect(alphaTools.map((tool) => tool.name).sort()).toEqual([
      'add',
      'chatty',
      'echo',
      'fail',
      'sleep',
      'write_file',
    ]);
    expect(betaTools).toHaveLength(9);
    expect(requestsOf(gateway, 'tools/list')).toHaveLength(1);
    const all = await client.listAllTools();
    expect([...all.keys()].sort()).toEqual(['alpha', 'beta']);
    expect(gateway.requests.every((request) => request.path === '/mcp')).toBe(
      true,
    );
  });

  it('calls <target>_<tool>, including tool names that contain an underscore', async () => {
    const { gateway, client, alpha } = await setup();
    const result = await client.callTool({
      target: 'alpha',
      tool: 'write_file',
      arguments: {},
    });
    expect(result.content).toEqual([{ type: 'text', text: 'written' }]);
    const call = gateway.requests.find(
      (request) => request.rpcMethod === 'tools/call',
    );
    expect((call?.body as { params: { name: string } }).params.name).toBe(
      'alpha_write_file',
    );
    const upstream = alpha.requests.find(
      (request) => request.rpcMethod === 'tools/call',
    );
    expect((upstream?.body as { params: { name: string } }).params.name).toBe(
      'write_file',
    );
  });

  it('follows nextCursor when the gateway paginates its merged list', async () => {
    const { gateway, client } = await setup({ pageSize: 4 });
    const all = await client.listAllTools();
    expect(
      (all.get('alpha')?.length ?? 0) + (all.get('beta')?.length ?? 0),
    ).toBe(15);
    expect(requestsOf(gateway, 'tools/list')).toHaveLength(4);
  });

  it('maps a denied call (HTTP 400, JSON-RPC -32602) to HTTP_STATUS with the JSON-RPC error, and hides denied tools', async () => {
    const { client } = await setup({ deny: ['alpha_write_file'] });
    expect(
      (await client.listTools({ target: 'alpha' })).map((tool) => tool.name),
    ).not.toContain('write_file');
    const error = (await client
      .callTool({ target: 'alpha', tool: 'write_file', arguments: {} })
      .catch((caught: unknown) => caught)) as GatewayHttpError;
    expect(error.code).toBe(GatewayErrorCode.HttpStatus);
    expect(error.status).toBe(400);
    expect(error.jsonRpcError).toMatchObject({
      code: -32602,
      message: 'Unknown tool: alpha_write_file',
    });
    expect(error.isRetryable).toBe(false);
  });

  it.each([
    {
      what: 'the gateway forgets its session (404)',
      lose: (setUp: Awaited<ReturnType<typeof setup>>) =>
        setUp.gateway.forgetSessions(),
      target: 'beta',
      text: 'b',
    },
    {
      what: 'the gateway cannot decode the session id (400)',
      lose: (setUp: Awaited<ReturnType<typeof setup>>) =>
        setUp.gateway.rotateSessionEncoding(),
      target: 'alpha',
      text: 'again',
    },
    {
      what: 'an upstream session expired behind the gateway (opaque 500 naming the session, #3622)',
      lose: (setUp: Awaited<ReturnType<typeof setup>>) =>
        setUp.alpha.forgetSessions(),
      target: 'alpha',
      text: 'b',
    },
  ])('re-initializes once when $what', async ({ lose, target, text }) => {
    const setUp = await setup();
    const { gateway, client } = setUp;
    await client.callTool({
      target: 'alpha',
      tool: 'echo',
      arguments: { text: 'a' },
    });
    lose(setUp);
    const result = await client.callTool({
      target,
      tool: 'echo',
      arguments: { text },
    });
    expect(result.content).toEqual([{ type: 'text', text }]);
    expect(requestsOf(gateway, 'initialize')).toHaveLength(2);
  });

  it('leaves out names it cannot split (unprefixed gateway), or keeps them under "" on request', async () => {
    const alpha = await startSessionfulServer({ name: 'alpha' });
    const gateway = await startTestGateway({
      targets: { alpha: `${alpha.url}/mcp` },
      prefixMode: 'never',
    });
    const client = new GatewayClient({
      url: gateway.url,
      mode: 'multiplexed',
      role: 'director',
    });
    track(alpha);
    track(gateway);
    track(client);
    const all = await client.listAllTools();
    expect(all.has('')).toBe(false);
    // 'write_file' unprefixed is indistinguishable from target 'write', tool 'file': why multiplexed mode needs prefixMode always
    expect([...all.keys()]).toEqual(['write']);
    const everything = await client.listAllTools({ includeUnprefixed: true });
    expect(
      everything
        .get('')
        ?.map((tool) => tool.name)
        .sort(),
    ).toEqual(['add', 'chatty', 'echo', 'fail', 'sleep']);
  });

  it('keeps listAllTools for multiplexed mode only', async () => {
    const server = await startSessionfulServer();
    const client = new GatewayClient({
      url: server.url,
      mode: 'per-target',
      role: 'director',
    });
    track(server);
    track(client);
    const error = await client
      .listAllTools()
      .catch((caught: unknown) => caught);
    expect((error as GatewayError).code).toBe(GatewayErrorCode.InvalidConfig);
  });
});

describe('the test gateway answers as agentgateway does', () => {
  const post = (url: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const both = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    },
  };

  it('406 without both Accept types, 415 for non-JSON, 400 without session, 400 undecodable, 405 GET, 503 without backends', async () => {
    const { gateway } = await setup();
    const statusOf = async (headers: Record<string, string>, body: unknown) =>
      (await post(gateway.url, headers, body)).status;
    expect(
      await statusOf(
        { accept: 'application/json', 'content-type': 'application/json' },
        initialize,
      ),
    ).toBe(406);
    expect(
      await statusOf({ ...both, 'content-type': 'text/plain' }, initialize),
    ).toBe(415);
    expect(await statusOf(both, 'not json')).toBe(400);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    expect(await statusOf(both, list)).toBe(400);
    expect(await statusOf({ ...both, 'mcp-session-id': '%%%' }, list)).toBe(
      400,
    );
    expect((await fetch(`${gateway.url}/mcp`)).status).toBe(405);
    const empty = await startTestGateway({ targets: {} });
    track(empty);
    expect((await post(empty.url, both, initialize)).status).toBe(503);
    const client = new GatewayClient({
      url: empty.url,
      mode: 'multiplexed',
      role: 'director',
    });
    track(client);
    const error = (await client
      .listAllTools()
      .catch((caught: unknown) => caught)) as GatewayHttpError;
    expect(error.code).toBe(GatewayErrorCode.HttpStatus);
    expect(error.status).toBe(503);
    expect(error.isRetryable).toBe(true);
  });
});
