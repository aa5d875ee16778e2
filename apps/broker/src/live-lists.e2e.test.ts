import { describe, expect, it } from 'vitest';
import { startLiveBackend } from './__fixtures__/live-backend.js';
import { scratchFolder, spawnBroker } from './__fixtures__/spawn-broker.js';

describe('live tool lists (built broker over stdio, sessionful SDK backend)', () => {
  it('finds a tool the backend adds at run time, without a restart and long before the TTL, with one debounced re-listing', async () => {
    const backend = await startLiveBackend('live', [
      { name: 'first_tool', description: 'Count the pebbles on a beach' },
    ]);
    const scratch = scratchFolder('broker-live-');
    const file = scratch.backends(['live']);
    const broker = await spawnBroker({
      HERETEK_GATEWAY_URL: backend.url,
      HERETEK_BACKENDS_FILE: file,
      HERETEK_DISCOVERY_TTL_MS: '3600000',
    });
    const search = async (query: string) =>
      JSON.stringify(
        (
          await broker.client.callTool({
            name: 'mcp_search_tools',
            arguments: { query },
          })
        ).content,
      );
    try {
      expect(await search('pebbles beach')).toContain('live_first_tool');
      expect(await search('quokkas island')).not.toContain('live_late');
      // The gateway client holds the session's standalone GET stream open.
      await expect.poll(() => backend.streams()).toBeGreaterThan(0);
      const listingsBefore = backend.listings();

      // Two changes in one burst: one re-listing after the quiet time.
      backend.addTool('late_quokka', 'Count the quokkas on an island');
      backend.addTool('late_wombat', 'Count the wombats in a burrow');
      await expect
        .poll(() => search('quokkas island'))
        .toContain('live_late_quokka');
      expect(await search('wombats burrow')).toContain('live_late_wombat');
      expect(backend.listings()).toBe(listingsBefore + 1);
      expect(broker.stderr()).toMatch(
        /discovery: backend "live" says its tools changed; listing again/,
      );
      expect(broker.stderr()).toMatch(/discovery: live listed again, 3 tools/);
      const call = await broker.client.callTool({
        name: 'mcp_call_tool',
        arguments: { name: 'live_late_quokka', arguments: {} },
      });
      expect(JSON.stringify(call.content)).toContain('late_quokka ok');
    } finally {
      await broker.close();
      await backend.close();
      scratch.remove();
    }
  });
});
