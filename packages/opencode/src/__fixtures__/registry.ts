/**
 * Test fixture: a loopback npm registry (verdaccio, a devDependency) holding
 * the packed `@heretek/opencode` and the packages it installs with, as a
 * user's registry holds the published ones. `pnpm pack` writes the tarballs
 * as they are published (workspace ranges become versions); the registry has
 * no uplink, so an install from it never leaves 127.0.0.1 and fails on
 * anything it does not hold.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import {
  PACKAGE_ROOT,
  REPOSITORY_ROOT,
  temporaryFolder,
} from './run-opencode.js';
import { closedPort } from './runs.js';

/** A running registry. */
export type Registry = {
  /** Its URL, for `npm_config_registry`. */
  url: string;
  /** The tarballs it holds (`heretek-opencode-0.0.0.tgz`, ...). */
  tarballs: string[];
  close: () => Promise<void>;
};

/** The package folders packed and published, lowest first. */
const WORKSPACE_PACKAGES = [
  'packages/prefix',
  'apps/broker',
  'packages/opencode',
];

/** pnpm as the repository pins it (`packageManager`). */
function pnpm(): string[] {
  const { packageManager } = JSON.parse(
    readFileSync(join(REPOSITORY_ROOT, 'package.json'), 'utf8'),
  ) as { packageManager: string };
  return ['npx', '-y', packageManager];
}

/** The tarballs to publish: the workspace packages as `pnpm pack` writes them, and their registry dependencies from this install. */
function packAll(into: string): string[] {
  mkdirSync(into);
  const [command, ...args] = pnpm();
  for (const folder of WORKSPACE_PACKAGES)
    execFileSync(command!, [...args, 'pack', '--pack-destination', into], {
      cwd: join(REPOSITORY_ROOT, folder),
      stdio: 'ignore',
    });
  // `zod`, the one dependency the three take from the registry, packed from
  // this install as npm packs a package (`npm pack` of the installed folder
  // crashes with npm 11.19). pnpm's store links identical files together;
  // npm does not unpack a tar's hard links, so they are stored as files.
  const zod = dirname(
    realpathSync(
      createRequire(join(PACKAGE_ROOT, 'package.json')).resolve(
        'zod/package.json',
      ),
    ),
  );
  const { version } = JSON.parse(
    readFileSync(join(zod, 'package.json'), 'utf8'),
  ) as { version: string };
  execFileSync('tar', [
    '--hard-dereference',
    '-czf',
    join(into, `zod-${version}.tgz`),
    '-C',
    dirname(zod),
    '--transform',
    `s,^${basename(zod)},package,`,
    basename(zod),
  ]);
  return readdirSync(into)
    .filter((file) => file.endsWith('.tgz'))
    .map((file) => join(into, file));
}

/** Waits until the registry answers its ping (a ceiling, not a timing). */
async function answers(url: string): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/-/ping`)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > until)
      throw new Error(`verdaccio did not answer at ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts verdaccio on 127.0.0.1 and publishes the packages into it. */
export async function startRegistry(): Promise<Registry> {
  const folder = temporaryFolder('registry');
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}`;
  const config = join(folder, 'config.yaml');
  writeFileSync(
    config,
    [
      `storage: ${join(folder, 'storage')}`,
      'auth:',
      `  htpasswd: { file: ${join(folder, 'htpasswd')} }`,
      'uplinks: {}',
      'packages:',
      "  '**': { access: $all, publish: $authenticated }",
      'log: { type: stdout, format: pretty, level: error }',
      '',
    ].join('\n'),
  );
  const bin = join(
    dirname(
      createRequire(join(PACKAGE_ROOT, 'package.json')).resolve(
        'verdaccio/package.json',
      ),
    ),
    'bin/verdaccio',
  );
  const server = spawn(
    process.execPath,
    [bin, '--config', config, '--listen', `127.0.0.1:${port}`],
    { stdio: 'ignore' },
  );
  const close = () =>
    new Promise<void>((resolve) => {
      if (server.exitCode !== null) return resolve();
      server.once('exit', () => resolve());
      server.kill('SIGTERM');
    });
  try {
    await answers(url);
    const user = await fetch(`${url}/-/user/org.couchdb.user:heretek`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'heretek', password: 'heretek-test' }),
    });
    const { token } = (await user.json()) as { token: string };
    const npmrc = join(folder, 'npmrc');
    writeFileSync(
      npmrc,
      `registry=${url}/\n//127.0.0.1:${port}/:_authToken=${token}\n`,
    );
    const tarballs = packAll(join(folder, 'tarballs'));
    for (const tarball of tarballs) {
      execFileSync(
        'npm',
        ['publish', tarball, '--provenance=false', '--ignore-scripts'],
        {
          env: { ...process.env, NPM_CONFIG_USERCONFIG: npmrc },
          cwd: folder,
          stdio: 'ignore',
        },
      );
    }
    return { url, tarballs: tarballs.map((file) => basename(file)), close };
  } catch (error) {
    await close();
    throw error;
  }
}
