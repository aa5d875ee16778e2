// Benchmark: verifying a ~100 MiB skill tree of many files with verifySkillLock,
// against GNU sha256sum over the same files, in the same run.
//
//   pnpm turbo run bench --filter @heretek/skills          (builds first)
//   node bench/run.mjs [--files 1600] [--file-kib 64] [--rounds 5]
//
// Prints one JSON summary line at the end. Needs bash, find, sort, xargs, sha256sum.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomFillSync } from 'node:crypto';
import { lockSkills, verifySkillLock } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '1600' },
    'file-kib': { type: 'string', default: '64' },
    rounds: { type: 'string', default: '5' },
  },
});
const fileCount = Number(values.files);
const fileBytes = Number(values['file-kib']) * 1024;
const rounds = Number(values.rounds);

const root = mkdtempSync(join(tmpdir(), 'skills-bench-'));
const skill = join(root, 'skills', 'bench');
try {
  // Build the tree: 40 folders, random bytes, a valid SKILL.md.
  mkdirSync(skill, { recursive: true });
  writeFileSync(
    join(skill, 'SKILL.md'),
    '---\nname: bench\ndescription: Benchmark tree.\n---\n',
  );
  const buffer = Buffer.alloc(fileBytes);
  const listFile = join(root, 'files.list');
  const paths = ['SKILL.md'];
  for (let index = 0; index < fileCount; index += 1) {
    const folder = `d${String(index % 40).padStart(2, '0')}`;
    mkdirSync(join(skill, folder), { recursive: true });
    randomFillSync(buffer);
    const path = `${folder}/f${index}.bin`;
    writeFileSync(join(skill, path), buffer);
    paths.push(path);
  }
  writeFileSync(listFile, paths.sort().join('\0') + '\0');
  const totalBytes = fileCount * fileBytes;
  lockSkills({ workspaceRoot: root });

  const timeIt = (fn) => {
    const start = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const ours = () => verifySkillLock({ workspaceRoot: root });
  // Baseline 1: sha256sum alone over the same files (file list prepared in advance).
  const sha256sum = () =>
    execFileSync('bash', [
      '-c',
      `cd "$1" && xargs -0 sha256sum -- < "$2" > /dev/null`,
      'bash',
      skill,
      listFile,
    ]);
  // Baseline 2: the README's shell tree hash (find | sort | xargs sha256sum | sed | sha256sum).
  const pipeline = () =>
    execFileSync('bash', [
      '-c',
      `cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum -- | sed 's/^\\([0-9a-f]\\{64\\}\\)  \\.\\//\\1  /' | sha256sum > /dev/null`,
      'bash',
      skill,
    ]);

  // Warm the page cache and the JIT, then alternate the contenders each round.
  ours();
  sha256sum();
  pipeline();
  const samples = { ours: [], sha256sum: [], pipeline: [] };
  for (let round = 0; round < rounds; round += 1) {
    samples.ours.push(timeIt(ours));
    samples.sha256sum.push(timeIt(sha256sum));
    samples.pipeline.push(timeIt(pipeline));
  }
  const median = (list) =>
    [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const mibPerSecond = (ms) => totalBytes / 1024 / 1024 / (ms / 1000);
  const result = {
    files: fileCount + 1,
    mebibytes: totalBytes / 1024 / 1024,
    rounds,
    medianMs: {
      verifySkillLock: Math.round(median(samples.ours)),
      sha256sum: Math.round(median(samples.sha256sum)),
      shellTreeHash: Math.round(median(samples.pipeline)),
    },
    mibPerSecond: {
      verifySkillLock: Math.round(mibPerSecond(median(samples.ours))),
      sha256sum: Math.round(mibPerSecond(median(samples.sha256sum))),
      shellTreeHash: Math.round(mibPerSecond(median(samples.pipeline))),
    },
    ratioToSha256sum: Number(
      (median(samples.sha256sum) / median(samples.ours)).toFixed(2),
    ),
    node: process.version,
    cpus: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`,
  };
  process.stdout.write(
    `verifySkillLock ${result.mibPerSecond.verifySkillLock} MiB/s, sha256sum ${result.mibPerSecond.sha256sum} MiB/s, ` +
      `shell tree hash ${result.mibPerSecond.shellTreeHash} MiB/s: ratio to sha256sum ${result.ratioToSha256sum} (target >= 0.80)\n`,
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
