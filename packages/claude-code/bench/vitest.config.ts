import { benchRunConfig } from '@heretek/config/vitest';
import packageConfig from '../vitest.config.js';

// `pnpm bench`: the Claude Code runs of bench/claude-code.bench-run.ts, one
// at a time, with the tests' fixture aliases.
export default benchRunConfig({
  root: new URL('..', import.meta.url),
  resolve: packageConfig.resolve,
});
