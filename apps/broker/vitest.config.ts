import { fileURLToPath } from 'node:url';
import { packageTestConfig } from '@heretek/config/vitest';
import { mergeConfig } from 'vitest/config';

// Timeouts are ceilings for a loaded 2-core CI machine where tests spawn
// processes and servers, not timings: one test may start the broker three
// times, and on such a machine each start took up to 10 s.
// `#gateway-client-fixtures/*` is the gateway client's test fixtures (MCP
// servers on loopback), for tests only.
export default mergeConfig(
  packageTestConfig({ testTimeout: 60_000, hookTimeout: 60_000 }),
  {
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
  },
);
