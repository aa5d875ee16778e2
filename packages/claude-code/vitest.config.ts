import { fileURLToPath } from 'node:url';
import { packageTestConfig } from '@heretek/config/vitest';
import { mergeConfig } from 'vitest/config';

// Timeouts are ceilings for a loaded 2-core CI machine where tests run
// Claude Code, not timings. `#broker-fixtures/*` is the broker's test
// fixtures (real MCP servers behind a loopback gateway, the loopback model
// stand-in, the emulated Anthropic cache), for tests only.
export default mergeConfig(packageTestConfig({ testTimeout: 180_000 }), {
  resolve: {
    alias: {
      '#broker-fixtures': fileURLToPath(
        new URL('../../apps/broker/src/__fixtures__', import.meta.url),
      ),
    },
  },
});
