import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { getEncoding } from 'js-tiktoken';
import { describe, expect, it } from 'vitest';
import { Broker } from './broker.js';
import { createBrokerServer, registerMetaTools } from './server.js';

/** The `tools/list` result as an MCP client receives it, with a real o200k_base tokenizer. */
async function measureToolsList(): Promise<{ tokens: number; bytes: number }> {
  const server = createBrokerServer();
  registerMetaTools(server, { broker: new Broker({ role: 'director' }) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'token-budget', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  const result = await client.listTools();
  await client.close();
  const json = JSON.stringify(result);
  return {
    tokens: getEncoding('o200k_base').encode(json).length,
    bytes: Buffer.byteLength(json),
  };
}

describe('tools/list token budget', () => {
  it('stays at or under 300 o200k_base tokens for all three meta-tools', async () => {
    const { tokens, bytes } = await measureToolsList();
    process.stderr.write(
      `tools/list: ${tokens} o200k_base tokens, ${bytes} bytes\n`,
    );
    expect(tokens).toBeLessThanOrEqual(300);
  });
});
