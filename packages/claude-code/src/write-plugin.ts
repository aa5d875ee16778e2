/**
 * Build step (`node dist/write-plugin.mjs` in the package folder): makes the
 * whole plugin folder, `plugin/`: the files generated from the repository's
 * `roles/` with `@heretek/prefix`, the bundled hook program, and a copy of
 * the broker's bundle (no runtime dependencies), so the folder runs on its
 * own wherever Claude Code copies it (`--plugin-dir`, a marketplace
 * install, the npm package).
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

const PLUGIN = 'plugin';

const brokerDist = join(
  dirname(
    createRequire(import.meta.url).resolve('@heretek/broker/package.json'),
  ),
  'dist',
);

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as {
  version: string;
};
rmSync(PLUGIN, { recursive: true, force: true });
const files = pluginFiles({ workspaceRoot: join('..', '..'), version });
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(join(PLUGIN, path)), { recursive: true });
  writeFileSync(join(PLUGIN, path), text);
}
cpSync(join('dist', 'heretek-hook.mjs'), join(PLUGIN, HOOK_SCRIPT));
const broker = join(PLUGIN, dirname(BROKER_BIN));
cpSync(brokerDist, broker, {
  recursive: true,
  filter: (source) =>
    !/\.(map|d\.ts)$/.test(source) && !source.endsWith('metafile-esm.json'),
});
writeFileSync(
  join(broker, 'package.json'),
  `${JSON.stringify({ type: 'module', private: true }, null, 2)}\n`,
);
cpSync('LICENSE', join(PLUGIN, 'LICENSE'));
cpSync('README.md', join(PLUGIN, 'README.md'));
