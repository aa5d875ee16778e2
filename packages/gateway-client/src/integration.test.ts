import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from './gateway-client.js';
import { useProxiedServers } from './__fixtures__/third-party.js';

/**
 * Third-party parts end to end: the official memory and filesystem stdio
 * servers, each behind supergateway (stdio -> Streamable HTTP), behind an
 * http-proxy route per target, listed and called in per-target mode.
 */
describe(
  'official stdio servers behind supergateway and a reverse proxy (per-target)',
  { timeout: 90_000 },
  () => {
    const directory = mkdtempSync(join(tmpdir(), 'gateway-client-it-'));
    writeFileSync(
      join(directory, 'hello.txt'),
      'hello from the filesystem server\n',
    );
    // After hooks run last-registered first: the folder goes after the servers.
    afterAll(() => rmSync(directory, { recursive: true, force: true }));
    const proxy = useProxiedServers({
      memory: {
        bin: 'mcp-server-memory',
        env: { MEMORY_FILE_PATH: join(directory, 'memory.jsonl') },
      },
      files: { bin: 'mcp-server-filesystem', args: [directory] },
    });
    let client: GatewayClient;

    beforeAll(() => {
      client = new GatewayClient({
        url: proxy().url,
        mode: 'per-target',
        role: 'director',
        timeoutMs: 20_000,
      });
    });

    afterAll(async () => {
      await client?.close();
    });

    it('lists the tools of both targets through the proxy', async () => {
      const [memoryTools, fileTools] = await Promise.all([
        client.listTools({ target: 'memory' }),
        client.listTools({ target: 'files' }),
      ]);
      expect(memoryTools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining([
          'create_entities',
          'read_graph',
          'search_nodes',
        ]),
      );
      expect(fileTools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining([
          'read_text_file',
          'list_directory',
          'write_file',
        ]),
      );
      expect(
        fileTools.find((tool) => tool.name === 'read_text_file')?.annotations
          ?.readOnlyHint,
      ).toBe(true);
      expect(proxy().routed).toEqual(
        expect.arrayContaining(['POST memory', 'POST files']),
      );
    });

    it('calls memory tools and filesystem tools', async () => {
      const created = await client.callTool({
        target: 'memory',
        tool: 'create_entities',
        arguments: {
          entities: [
            {
              name: 'gateway-client',
              entityType: 'package',
              observations: ['speaks Streamable HTTP'],
            },
          ],
        },
      });
      expect(created.isError).toBeFalsy();
      const graph = await client.callTool({
        target: 'memory',
        tool: 'read_graph',
        arguments: {},
      });
      expect(JSON.stringify(graph.content)).toContain('speaks Streamable HTTP');

      const read = await client.callTool({
        target: 'files',
        tool: 'read_text_file',
        arguments: { path: join(directory, 'hello.txt') },
      });
      expect(JSON.stringify(read.content)).toContain(
        'hello from the filesystem server',
      );
      const written = await client.callTool({
        target: 'files',
        tool: 'write_file',
        arguments: {
          path: join(directory, 'out.txt'),
          content: 'via the gateway client',
        },
      });
      expect(written.isError).toBeFalsy();
      expect(readFileSync(join(directory, 'out.txt'), 'utf8')).toBe(
        'via the gateway client',
      );
      const outside = await client.callTool({
        target: 'files',
        tool: 'read_text_file',
        arguments: { path: '/etc/hostname' },
      });
      expect(outside.isError).toBe(true);
      expect(client.endpointInfo({ target: 'memory' })?.sessionId).toBeTruthy();
      expect(client.endpointInfo({ target: 'memory' })?.initializations).toBe(
        1,
      );
    });
  },
);
