import { join } from 'node:path';
import { mountVerifiedSkills, SkillError } from '@heretek/skills';
import type { McpServer } from '@modelcontextprotocol/server';
import {
  memorySkillFiles,
  SkillsExtension,
  type SkillWarning,
} from '@modelcontextprotocol/server/ext/skills';

/** A skill the broker serves through the MCP skills extension. */
export type ServedSkill = {
  name: string;
  /** Verified tree hash from `.skill-lock.json`. */
  treeHash: string;
  fileCount: number;
  /** Resource URI of the skill's `SKILL.md`, as clients see it. */
  uri: string;
};

/** A skill the broker refused to serve, and why. */
export type RefusedSkillReport = {
  name: string;
  /** A `SkillErrorCode` of `@heretek/skills`, `catalog_rejected` or `error`. */
  code: string;
  /** What to fix. */
  reason: string;
};

/**
 * Verifies the workspace's skill locks (and `grimoire.lock`) and serves only the skills that
 * verify, through the MCP skills extension, from the exact bytes that were hashed; each
 * refused skill is logged with its reason. Registers no tool. Call before `server.connect`;
 * when no skill verifies, the extension is not attached. Both lists come sorted by name.
 */
export async function registerVerifiedSkills({
  server,
  workspaceRoot,
  log,
}: {
  /** The broker's SDK v2 server, not yet connected. */
  server: McpServer;
  /** Folder that holds `skills/`, `.skill-lock.json` and `grimoire.lock`. */
  workspaceRoot: string;
  log: (line: string) => void;
}): Promise<{ served: ServedSkill[]; refused: RefusedSkillReport[] }> {
  const { mounted, refused } = mountVerifiedSkills({ workspaceRoot });
  const refusedReports: RefusedSkillReport[] = refused.map(
    ({ skillName, error }) => ({
      name: skillName,
      code: SkillError.isInstance(error) ? error.code : 'error',
      reason: error.message,
    }),
  );

  const record: Record<string, Uint8Array> = {};
  for (const skill of mounted)
    for (const file of skill.files)
      record[`${skill.name}/${file.path}`] = file.bytes;
  const warnings: SkillWarning[] = [];
  const catalog =
    mounted.length === 0
      ? undefined
      : await SkillsExtension.load(memorySkillFiles(record), {
          onWarning: (warning) => warnings.push(warning),
        });

  const entriesByName = new Map(
    (catalog?.entries ?? []).map(
      (entry) => [String(entry.frontmatter['name']), entry.uri] as const,
    ),
  );
  const served: ServedSkill[] = [];
  for (const { name, treeHash, fileCount } of mounted) {
    const uri = entriesByName.get(name);
    if (uri !== undefined) served.push({ name, treeHash, fileCount, uri });
    else
      refusedReports.push({
        name,
        code: 'catalog_rejected',
        reason: `the MCP skills catalog rejected it: ${
          warnings
            .filter((warning) => warning.path.includes(name))
            .map((warning) => `${warning.path}: ${warning.message}`)
            .join('; ') || 'no reason given'
        }`,
      });
  }

  if (catalog !== undefined && served.length > 0) catalog.attach(server);
  served.sort((left, right) => left.name.localeCompare(right.name));
  refusedReports.sort((left, right) => left.name.localeCompare(right.name));
  for (const skill of served)
    log(
      `skills: serving "${skill.name}" (${skill.treeHash}, ${skill.fileCount} files) at ${skill.uri}`,
    );
  for (const skill of refusedReports)
    log(`skills: refusing "${skill.name}" (${skill.code}): ${skill.reason}`);
  if (served.length === 0 && refusedReports.length === 0)
    log(
      `skills: nothing to serve: ${join(workspaceRoot, 'skills')} holds no skill folder and no skill is locked; ` +
        'point HERETEK_SKILLS_ROOT at the folder that holds skills/ and .skill-lock.json, or add a skill and run "heretek-skills lock"',
    );
  return { served, refused: refusedReports };
}
