import { packageTestConfig } from '@heretek/config/vitest';

export default packageTestConfig({ testTimeout: 180_000 });
