import { packageTestConfig } from '@heretek/config/vitest';

// Timeouts are ceilings for a loaded 2-core CI machine where tests spawn
// processes and servers, not timings.
export default packageTestConfig({ testTimeout: 30_000 });
