// The built broker's `initialize` answer carries server instructions built
// from the configured backend table: the same bytes in two processes started
// with the same configuration, within their token budget, while `tools/list`
// stays as it was.
import { afterAll, describe, expect, it } from 'vitest';
import {
  scratchFolder,
  spawnBroker,
  type SpawnedBroker,
} from './__fixtures__/spawn-broker.js';
import { INSTRUCTIONS_TOKEN_BUDGET, tokens } from './__fixtures__/tokens.js';
import { buildInstructions } from './instructions.js';

const scratch = scratchFolder('broker-instructions-e2e-');
afterAll(() => scratch.remove());

// Targets the seed catalog does not have: nothing discovered or seeded can
// have named them, only the table.
const rows = [
  { backend: 'billing-api', target: 'billing', profile: 'core' },
  { backend: 'ledger-api', target: 'ledger', profile: 'core' },
  { backend: 'crash-db', target: 'crashes', profile: 'android' },
];

const env = {
  HERETEK_BROKER_OFFLINE: '1',
  HERETEK_BACKENDS_FILE: scratch.backends(rows),
  HERETEK_USAGE_FILE: 'off',
  HERETEK_INDEX_CACHE_FILE: 'off',
};

/** What one start of the broker answers: its instructions and its tools/list, as the client got them. */
async function firstAnswers(): Promise<{
  instructions: string | undefined;
  toolsList: string;
}> {
  const broker: SpawnedBroker = await spawnBroker(env);
  try {
    return {
      instructions: broker.client.getInstructions(),
      toolsList: JSON.stringify(await broker.client.listTools()),
    };
  } finally {
    await broker.close();
  }
}

describe('server instructions in the initialize answer', () => {
  it('are built from the backend table, identical across two starts, within the budget; tools/list is unchanged between them and within 300 tokens', async () => {
    const first = await firstAnswers();
    const second = await firstAnswers();
    expect(first.instructions).toBe(buildInstructions({ backends: rows }));
    expect(second.instructions).toBe(first.instructions);
    const text = first.instructions!;
    expect(text).toContain('3 backend targets in 2 profiles');
    expect(text).toMatch(/- core \([^)]*\): billing, ledger\n/);
    expect(text).toMatch(/- android \([^)]*\): crashes\n/);
    expect(text).toMatch(/search for it with mcp_search_tools/);
    process.stderr.write(
      `instructions, 3 backends: ${tokens(text)} o200k_base tokens, ${Buffer.byteLength(text)} bytes\n`,
    );
    expect(tokens(text)).toBeLessThanOrEqual(INSTRUCTIONS_TOKEN_BUDGET);
    expect(second.toolsList).toBe(first.toolsList);
    expect(tokens(first.toolsList)).toBeLessThanOrEqual(300);
  }, 60_000);
});
