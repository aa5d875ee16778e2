/**
 * Build step (`node dist/write-plugin.mjs` in the package folder): makes
 * the package folder a Claude Code plugin: the files generated from the
 * repository's `roles/` with `@heretek/prefix`, the bundled hook program,
 * and a copy of the broker's bundle (no runtime dependencies). The published
 * package holds these and nothing else (with its README and licence), so it
 * runs on its own wherever Claude Code puts it (`--plugin-dir`, an npm
 * plugin source).
 */
import {
  cpSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { BROKER_BIN, HOOK_SCRIPT } from './layout.js';
import { pluginFiles } from './plugin-files.js';

/** The generated entries of the package folder (also its published `files`). */
const GENERATED = ['.claude-plugin', '.mcp.json', 'agents', 'hooks', 'broker'];

const brokerDist = join(
  dirname(
    createRequire(import.meta.url).resolve('@heretek/broker/package.json'),
  ),
  'dist',
);

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as {
  version: string;
};
for (const entry of GENERATED) rmSync(entry, { recursive: true, force: true });
const files = pluginFiles({ workspaceRoot: join('..', '..'), version });
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
cpSync(join('dist', 'heretek-hook.mjs'), HOOK_SCRIPT);
const broker = dirname(BROKER_BIN);
cpSync(brokerDist, broker, {
  recursive: true,
  filter: (source) =>
    !/\.(map|d\.ts)$/.test(source) && !source.endsWith('metafile-esm.json'),
});
writeFileSync(
  join(broker, 'package.json'),
  `${JSON.stringify({ type: 'module', private: true }, null, 2)}\n`,
);
