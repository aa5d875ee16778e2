import { packageTestConfig } from '@heretek/config/vitest';

// Timeouts are ceilings for a loaded 2-core CI machine where tests spawn
// processes and servers, not timings. Restoring and evaluating catalogs is
// CPU work: a restore test took 24.5 s in a loaded CI run.
export default packageTestConfig({ testTimeout: 90_000 });
