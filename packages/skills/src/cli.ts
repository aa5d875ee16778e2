#!/usr/bin/env node
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError, isUsageError } from '@heretek/internal';
import { SkillError, SkillErrorCode } from './errors.js';
import {
  readSkillLock,
  SKILL_LOCK_FILE,
  GRIMOIRE_LOCK_FILE,
} from './lock-file.js';
import {
  listSkillFolders,
  lockSkills,
  mountVerifiedSkills,
  verifyGrimoireLock,
} from './skills.js';
import { hashTree } from './tree-hash.js';
import { VERSION } from './version.js';

const USAGE = `heretek-skills ${VERSION}: lock, verify and list skills pinned by SHA-256 tree hashes.

Usage:
  heretek-skills lock [--root DIR] [SKILL...]   hash skills/<SKILL> (default: every folder under skills/)
                                                and write ${SKILL_LOCK_FILE} (v3) and ${GRIMOIRE_LOCK_FILE}
  heretek-skills verify [--root DIR] [--json]   check every skill and both locks; exit 1 with the reason
  heretek-skills list [--root DIR] [--json]     show locked skills and unlocked folders
  heretek-skills hash DIR                       print the tree-hash listing and hash of any folder

Options:
  --root DIR    workspace root holding skills/ and the locks (default: current folder)
  --json        machine-readable output on stdout
  -h, --help    show this help
  -v, --version show the version

Exit codes: 0 success, 1 verification or lock failure, 2 usage error.
`;

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

function err(line: string): void {
  process.stderr.write(`${line}\n`);
}

function describe(error: unknown): string {
  if (SkillError.isInstance(error)) {
    return `${error.code}: ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function runLock({ root, names }: { root: string; names: string[] }): number {
  const { locked, grimoireLock } = lockSkills({
    workspaceRoot: root,
    skillNames: names,
  });
  for (const skill of locked) {
    out(`locked ${skill.name} ${skill.treeHash} (${skill.fileCount} files)`);
  }
  out(
    `wrote ${SKILL_LOCK_FILE} and ${GRIMOIRE_LOCK_FILE} (declaration_hash ${grimoireLock.declaration_hash})`,
  );
  return 0;
}

function runVerify({ root, json }: { root: string; json: boolean }): number {
  const failures: { skillName?: string; code: string; message: string }[] = [];
  const record = (error: unknown, skillName?: string): void => {
    failures.push({
      ...(skillName === undefined ? {} : { skillName }),
      code: SkillError.isInstance(error) ? error.code : 'error',
      message: error instanceof Error ? error.message : String(error),
    });
  };
  let declarationHash: string | undefined;
  try {
    readSkillLock({ workspaceRoot: root });
  } catch (error) {
    record(error);
  }
  if (failures.length === 0) {
    try {
      declarationHash = verifyGrimoireLock({
        workspaceRoot: root,
      }).declarationHash;
    } catch (error) {
      record(error);
    }
  }
  const verified: { name: string; treeHash: string; fileCount: number }[] = [];
  if (failures.length === 0 || failures[0]?.code !== SkillErrorCode.LockMissing) {
    const { mounted, refused } = mountVerifiedSkills({
      workspaceRoot: root,
      verifyGrimoire: false,
    });
    for (const skill of mounted) {
      verified.push({
        name: skill.name,
        treeHash: skill.treeHash,
        fileCount: skill.fileCount,
      });
    }
    for (const { skillName, error } of refused) {
      if (
        !failures.some(
          (failure) =>
            failure.skillName === undefined &&
            failure.message === error.message,
        )
      ) {
        record(error, skillName);
      }
    }
  }
  if (json) {
    out(
      JSON.stringify(
        { ok: failures.length === 0, declarationHash, verified, failures },
        null,
        2,
      ),
    );
  } else {
    for (const skill of verified) {
      out(`ok   ${skill.name} ${skill.treeHash} (${skill.fileCount} files)`);
    }
    for (const failure of failures) {
      err(
        `FAIL ${failure.skillName ?? '(locks)'}: ${failure.code}: ${failure.message}`,
      );
    }
    if (failures.length === 0) {
      out(
        `verified ${verified.length} skill(s); grimoire declaration_hash ${declarationHash ?? '-'}`,
      );
    } else {
      err(
        `verification failed: ${failures.length} problem(s); no skill is trusted until they are fixed`,
      );
    }
  }
  return failures.length === 0 ? 0 : 1;
}

function runList({ root, json }: { root: string; json: boolean }): number {
  const lock = readSkillLock({ workspaceRoot: root });
  const locked = Object.entries(lock.skills).map(([name, entry]) => ({
    name,
    ...entry,
  }));
  const lockedPaths = new Set(locked.map((entry) => entry.path));
  const unlocked = listSkillFolders({ workspaceRoot: root }).filter(
    (name) => !lockedPaths.has(`skills/${name}`),
  );
  if (json) {
    out(JSON.stringify({ locked, unlocked }, null, 2));
    return 0;
  }
  for (const entry of locked) {
    out(
      `${entry.name}\t${entry.fileCount} files\t${entry.treeHash}\t${entry.path}`,
    );
  }
  for (const name of unlocked) {
    out(`${name}\tunlocked\t-\tskills/${name}`);
  }
  return 0;
}

function runHash({ directory }: { directory: string }): number {
  const tree = hashTree({ directory });
  process.stdout.write(tree.listing);
  out(`${tree.treeHash} (${tree.fileCount} files)`);
  return 0;
}

function main(argv: string[]): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      root: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.version) {
    out(VERSION);
    return 0;
  }
  const [command, ...rest] = positionals;
  const root = resolve(values.root ?? process.cwd());
  switch (command) {
    case 'lock':
      return runLock({ root, names: rest });
    case 'verify':
    case 'list':
      if (rest.length > 0) {
        throw new UsageError(
          `"${command}" takes no skill names (got ${rest.join(' ')})`,
        );
      }
      return command === 'verify'
        ? runVerify({ root, json: values.json })
        : runList({ root, json: values.json });
    case 'hash':
      if (rest.length !== 1 || rest[0] === undefined) {
        throw new UsageError('"hash" takes exactly one folder');
      }
      return runHash({ directory: resolve(rest[0]) });
    case undefined:
      throw new UsageError('missing command');
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  if (isUsageError(error)) {
    err(`heretek-skills: ${(error as Error).message}\n`);
    process.stderr.write(USAGE);
    process.exitCode = 2;
  } else {
    err(`heretek-skills: ${describe(error)}`);
    process.exitCode = 1;
  }
}
