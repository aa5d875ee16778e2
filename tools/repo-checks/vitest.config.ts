import { packageTestConfig } from '@heretek/config/vitest';

export default packageTestConfig({ testTimeout: 60_000 });
