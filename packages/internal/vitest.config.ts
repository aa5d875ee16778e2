import { packageTestConfig } from '@heretek/config/vitest';

export default packageTestConfig();
