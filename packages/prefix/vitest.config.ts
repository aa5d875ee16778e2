import { packageTestConfig } from '@heretek/config/vitest';

// Timeouts are ceilings for a loaded 2-core CI machine where tests spawn
// processes and servers, not timings. The CLI's tests run at once, each
// process loading the tokenizer, and each test's clock runs while the others
// take the cores: two took 50 s on such a machine, and 46 s at load 11 here.
export default packageTestConfig({ testTimeout: 180_000 });
