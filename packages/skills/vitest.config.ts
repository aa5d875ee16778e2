import { packageTestConfig } from '@heretek/config/vitest';

// Timeouts are ceilings for a loaded 2-core CI machine where tests spawn
// processes and servers, not timings. The property tests hash trees of files
// (6 s each in a loaded CI run) and the tree-hash tests run shell and Python
// (9 s).
export default packageTestConfig({ testTimeout: 90_000 });
