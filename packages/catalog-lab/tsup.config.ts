import { libraryConfig } from '@heretek/config/tsup';

export default libraryConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
});
