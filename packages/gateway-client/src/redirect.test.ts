import { describe, expect, it } from 'vitest';
import { listen, startSessionfulServer } from './__fixtures__/servers.js';
import { closeAfterEach } from './__fixtures__/cleanups.js';

const { track, client } = closeAfterEach();

/**
 * A gateway URL that answers every request with `status` and a `Location`
 * on the real server: each request must be sent again there, method, body
 * and headers kept.
 */
async function redirectingTo(url: string, status: 307 | 308) {
  return track(
    await listen((request, response) => {
      response.writeHead(status, { location: `${url}${request.url ?? '/'}` });
      response.end();
    }),
  );
}

describe('a gateway URL that redirects', () => {
  for (const status of [307, 308] as const) {
    it(`follows ${status} for every request: listing and calls work as on the real server`, async () => {
      const server = track(await startSessionfulServer({ generatedTools: 3 }));
      const front = await redirectingTo(server.url, status);
      const gateway = client(front);

      const tools = await gateway.listTools({ target: 'alpha' });
      expect(tools.map((tool) => tool.name)).toContain('echo');
      const result = await gateway.callTool({
        target: 'alpha',
        tool: 'echo',
        arguments: { text: 'through a redirect' },
      });
      expect(result.content).toEqual([
        { type: 'text', text: 'through a redirect' },
      ]);

      // Every POST reached the front and then the real server, with its
      // JSON-RPC body and the client's headers; only the first one was
      // sent to the front twice (once before the client knew it redirects).
      const redirected = front.requests.filter((r) => r.method === 'POST');
      const served = server.requests.filter((r) => r.method === 'POST');
      expect(redirected.map((r) => r.rpcMethod)).toEqual([
        served[0]?.rpcMethod,
        ...served.map((r) => r.rpcMethod),
      ]);
      expect(served.map((r) => r.rpcMethod)).toEqual(
        expect.arrayContaining(['initialize', 'tools/list', 'tools/call']),
      );
      for (const request of served)
        expect(request.headers['x-heretek-role']).toBe('director');
    });
  }
});
