import { fileURLToPath } from 'node:url';
import { listedMetaTools } from '@heretek/broker';
import { packageTestConfig } from '@heretek/config/vitest';
import { mergeConfig } from 'vitest/config';

// Timeouts are ceilings for a loaded 2-core CI machine where tests run
// OpenCode, not timings. `#broker-fixtures/*` is the broker's test fixtures
// (real MCP servers behind a loopback gateway, the loopback model stand-in,
// the emulated Anthropic cache), for tests only. The broker's meta-tool
// definitions are defined as the build defines them.
export default mergeConfig(packageTestConfig({ testTimeout: 180_000 }), {
  define: { __HERETEK_META_TOOLS__: JSON.stringify(listedMetaTools()) },
  resolve: {
    alias: {
      '#broker-fixtures': fileURLToPath(
        new URL('../../apps/broker/src/__fixtures__', import.meta.url),
      ),
    },
  },
});
