import { afterEach, describe, expect, it } from 'vitest';
import { GatewayClient } from './gateway-client.js';
import { GatewayError, GatewayErrorCode } from './errors.js';
import { startModernServer, startSessionfulServer, type Listening } from './__fixtures__/servers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

function track<T extends { close: () => Promise<void> }>(item: T): T {
  cleanups.push(() => item.close());
  return item;
}

function client(server: Listening, extra: Partial<ConstructorParameters<typeof GatewayClient>[0]> = {}) {
  return track(new GatewayClient({ url: server.url, mode: 'per-target', role: 'director', timeoutMs: 5_000, ...extra }));
}

describe('per-target mode against a sessionful SDK server (2025-11-25)', () => {
  it('initializes once, lists every page and calls tools with bare names', async () => {
    const server = track(await startSessionfulServer({ generatedTools: 25, pageSize: 7 }));
    const gateway = client(server);
    const tools = await gateway.listTools({ target: 'alpha' });
    expect(tools).toHaveLength(31);
    expect(tools.map((tool) => tool.name)).toContain('tool-024');
    expect(tools.find((tool) => tool.name === 'echo')?.annotations?.readOnlyHint).toBe(true);
    const result = await gateway.callTool({ target: 'alpha', tool: 'echo', arguments: { text: 'hi' } });
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }]);
    const info = gateway.endpointInfo({ target: 'alpha' });
    expect(info?.era).toBe('legacy');
    expect(info?.protocolVersion).toBe('2025-11-25');
    expect(info?.sessionId).toBeTruthy();
    expect(info?.initializations).toBe(1);
    const posts = server.requests.filter((request) => request.method === 'POST');
    expect(posts.every((request) => request.path === '/mcp/alpha')).toBe(true);
    expect(posts.filter((request) => request.rpcMethod === 'initialize')).toHaveLength(1);
    expect(posts.filter((request) => request.rpcMethod === 'tools/list')).toHaveLength(5);
    const afterInit = posts.filter((request) => request.rpcMethod === 'tools/call' || request.rpcMethod === 'tools/list');
    for (const request of afterInit) {
      expect(request.headers['mcp-session-id']).toBe(info?.sessionId);
      expect(request.headers['mcp-protocol-version']).toBe('2025-11-25');
      expect(request.headers['x-heretek-role']).toBe('director');
      expect(request.headers.accept).toContain('application/json');
      expect(request.headers.accept).toContain('text/event-stream');
    }
  });

  it('returns isError results instead of throwing and maps unknown tools to JSON_RPC_ERROR', async () => {
    const server = track(await startSessionfulServer());
    const gateway = client(server);
    const failed = await gateway.callTool({ target: 'alpha', tool: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);
    const error = await gateway.callTool({ target: 'alpha', tool: 'nope', arguments: {} }).catch((caught: unknown) => caught);
    expect(GatewayError.isInstance(error)).toBe(true);
    expect((error as GatewayError).code).toBe(GatewayErrorCode.JsonRpcError);
    expect((error as GatewayError).target).toBe('alpha');
  });
});

describe('modern servers (2026-07-28)', () => {
  it('negotiates the stateless revision and lists and calls', async () => {
    const server = track(await startModernServer({ generatedTools: 10, pageSize: 4 }));
    const gateway = client(server);
    const tools = await gateway.listTools({ target: 'beta' });
    expect(tools).toHaveLength(16);
    const result = await gateway.callTool({ target: 'beta', tool: 'add', arguments: { a: 2, b: 3 } });
    expect(result.content).toEqual([{ type: 'text', text: '5' }]);
    const info = gateway.endpointInfo({ target: 'beta' });
    expect(info?.era).toBe('modern');
    expect(info?.protocolVersion).toBe('2026-07-28');
    expect(info?.sessionId).toBeUndefined();
    expect(server.requests.some((request) => request.rpcMethod === 'initialize')).toBe(false);
    const call = server.requests.find((request) => request.rpcMethod === 'tools/call');
    expect(call?.headers['mcp-method']).toBe('tools/call');
    expect(call?.headers['mcp-name']).toBe('add');
  });
});
