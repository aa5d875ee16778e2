import { libraryConfig } from '@heretek/config/tsup';

export default libraryConfig({
  entry: ['src/index.ts', 'src/eval.ts', 'src/cli.ts'],
});
