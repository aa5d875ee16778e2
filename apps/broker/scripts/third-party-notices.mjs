// Writes the licence notices of every package bundled into dist/, from
// esbuild's metafile: each bundled input file is traced to the package that
// holds it, and that package's name, version, licence and licence text are
// listed. The broker publishes with its dependencies bundled, so their
// notices travel in the tarball as their licences require.
import {
  existsSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';

function packageRoot(file) {
  let dir = dirname(resolve(file));
  while (dir !== dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const json = JSON.parse(readFileSync(manifest, 'utf8'));
      if (typeof json.name === 'string' && typeof json.version === 'string')
        return { dir, json };
    }
    dir = dirname(dir);
  }
  return undefined;
}

function licenceText(dir) {
  const file = readdirSync(dir).find((name) =>
    /^(licen[cs]e|copying|notice)(\.|$)/i.test(name),
  );
  return file ? readFileSync(join(dir, file), 'utf8').trim() : undefined;
}

/**
 * @param {{ metafile: string, out: string }} options
 */
export async function writeThirdPartyNotices({ metafile, out }) {
  const meta = JSON.parse(readFileSync(metafile, 'utf8'));
  const own = JSON.parse(readFileSync('package.json', 'utf8')).name;
  const packages = new Map();
  for (const input of Object.keys(meta.inputs)) {
    const found = packageRoot(input);
    // The @heretek packages are this project's own, under its LICENSE.
    if (
      !found ||
      found.json.name === own ||
      found.json.name.startsWith('@heretek/')
    )
      continue;
    packages.set(`${found.json.name}@${found.json.version}`, found);
  }
  const sections = [...packages.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, { dir, json }]) => {
      const text =
        licenceText(dir) ??
        `Licence: ${json.license ?? 'not stated'} (no licence file shipped)`;
      return `## ${id}\n\nLicence: ${json.license ?? 'not stated'}\n\n\`\`\`\n${text}\n\`\`\`\n`;
    });
  writeFileSync(
    out,
    `# Third-party notices\n\nBesides this project's own packages (Apache-2.0, see LICENSE), the files in this\nfolder bundle the following packages.\n\n${sections.join('\n')}`,
  );
  rmSync(metafile, { force: true });
}
