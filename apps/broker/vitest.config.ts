import { fileURLToPath } from 'node:url';
import { packageTestConfig } from '@heretek/config/vitest';
import { mergeConfig } from 'vitest/config';

// Timeouts are ceilings for a loaded 2-core CI machine where tests spawn
// processes and servers, not timings. `#gateway-client-fixtures/*` is the
// gateway client's test fixtures (MCP servers on loopback), for tests only.
export default mergeConfig(packageTestConfig({ testTimeout: 30_000 }), {
  resolve: {
    alias: {
      '#gateway-client-fixtures': fileURLToPath(
        new URL(
          '../../packages/gateway-client/src/__fixtures__',
          import.meta.url,
        ),
      ),
    },
  },
});
