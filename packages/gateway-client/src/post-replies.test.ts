import { describe, expect, it } from 'vitest';
import { listen, startSessionfulServer } from './__fixtures__/servers.js';
import { closeAfterEach } from './__fixtures__/cleanups.js';

const { track, client } = closeAfterEach();

/** The request headers the front passes on. */
const FORWARDED = [
  'accept',
  'content-type',
  'mcp-session-id',
  'mcp-protocol-version',
  'x-heretek-role',
];

/**
 * A gateway in front of `url` that answers `notice` (status and headers) to
 * every POST of a notification (no id), forwards every other POST there and
 * refuses the standalone stream (405).
 */
async function frontAnsweringNotifications(
  url: string,
  notice: { status: number; headers?: Record<string, string> },
) {
  return track(
    await listen(async (request, response, body) => {
      if (request.method !== 'POST') {
        response.writeHead(405).end();
        return;
      }
      const message = JSON.parse(body.toString('utf8')) as { id?: unknown };
      if (message.id === undefined) {
        response.writeHead(notice.status, notice.headers).end();
        return;
      }
      const headers = new Headers();
      for (const name of FORWARDED) {
        const value = request.headers[name];
        if (typeof value === 'string') headers.set(name, value);
      }
      const forwarded = await fetch(`${url}${request.url ?? '/'}`, {
        method: 'POST',
        headers,
        body,
      });
      response.writeHead(
        forwarded.status,
        Object.fromEntries(forwarded.headers),
      );
      response.end(Buffer.from(await forwarded.arrayBuffer()));
    }),
  );
}

describe('replies to POSTs', () => {
  it('takes 204 No Content for a notification (a reply that may not carry a body)', async () => {
    const server = track(await startSessionfulServer({ generatedTools: 3 }));
    const front = await frontAnsweringNotifications(server.url, {
      status: 204,
    });
    const gateway = client(front);

    const tools = await gateway.listTools({ target: 'alpha' });
    expect(tools.map((tool) => tool.name)).toContain('echo');
    expect(
      front.requests
        .filter((r) => r.method === 'POST' && r.rpcId === undefined)
        .map((r) => r.rpcMethod),
    ).toContain('notifications/initialized');
  });
});
