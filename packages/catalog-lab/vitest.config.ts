import { packageTestConfig } from '@heretek/config/vitest';

// Timeouts are ceilings for a loaded 2-core CI machine where tests spawn
// processes, not timings: evaluating the vendored sets is CPU work.
export default packageTestConfig({ testTimeout: 90_000 });
