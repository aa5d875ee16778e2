// What the real binaries cannot show directly: `setup()` in OpenCode 1's
// preview context (OpenCode 1.18.33 calls both `server()` and `setup()`;
// its end-to-end tests show only that nothing is registered twice). Every
// OpenCode 2 behaviour is tested in the real OpenCode 2.1.2
// (`opencode2.e2e.test.ts`).
import { describe, expect, it } from 'vitest';
import plugin from './index.js';

describe("setup() in OpenCode 1's preview context", () => {
  it('registers nothing: server() does the work there', async () => {
    const calls: string[] = [];
    const record = (name: string) => async () => {
      calls.push(name);
      return { dispose: async () => {} };
    };
    // The preview context of OpenCode 1.18.33: no tool, no session domain.
    const preview = {
      options: {},
      agent: { transform: record('agent'), reload: async () => {} },
      aisdk: { sdk: record('sdk'), language: record('language') },
      catalog: { transform: record('catalog'), reload: async () => {} },
      command: { transform: record('command'), reload: async () => {} },
      integration: { transform: record('integration'), reload: async () => {} },
      plugin: { add: async () => {}, remove: async () => {} },
      reference: { transform: record('reference'), reload: async () => {} },
      skill: { transform: record('skill'), reload: async () => {} },
    };
    expect(await plugin.setup(preview)).toBeUndefined();
    expect(calls).toEqual([]);
  });
});
