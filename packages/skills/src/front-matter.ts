import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SkillFrontMatterError, SkillNameError } from './errors.js';

/** Agent Skills name rule: lowercase letters, digits and single inner hyphens. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

function countCodePoints(text: string): number {
  return Array.from(text).length;
}

/**
 * Throws {@link SkillNameError} unless `skillName` is a valid Agent Skills
 * name: 1-64 characters of `a-z`, `0-9` and single inner hyphens. Such a name
 * can never hold a path part (`/`, `\`), `.` or `..`.
 */
export function assertSkillName(skillName: string): void {
  if (typeof skillName !== 'string' || skillName.length === 0) {
    throw new SkillNameError({
      skillName: String(skillName),
      reason: 'it is empty',
    });
  }
  if (
    skillName.includes('/') ||
    skillName.includes('\\') ||
    skillName.split(/[/\\]/).includes('..') ||
    skillName === '.'
  ) {
    throw new SkillNameError({
      skillName,
      reason:
        'it has path parts or "..": a skill is named, never addressed by path',
    });
  }
  if (skillName.length > 64) {
    throw new SkillNameError({
      skillName,
      reason: 'it is longer than 64 characters',
    });
  }
  if (!SKILL_NAME_PATTERN.test(skillName)) {
    throw new SkillNameError({
      skillName,
      reason:
        'it must use only a-z, 0-9 and hyphens, with no leading, trailing or double hyphen',
    });
  }
}

const frontMatterSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(
        SKILL_NAME_PATTERN,
        'must use only a-z, 0-9 and single inner hyphens',
      ),
    description: z
      .string()
      .refine((value) => value.trim().length > 0, 'must not be empty')
      .refine(
        (value) => countCodePoints(value) <= 1024,
        'must be at most 1024 characters',
      ),
    license: z.string().optional(),
    compatibility: z
      .string()
      .min(1)
      .refine(
        (value) => countCodePoints(value) <= 500,
        'must be at most 500 characters',
      )
      .optional(),
    metadata: z.record(z.string(), z.string()).optional(),
    'allowed-tools': z.string().optional(),
  })
  .loose();

/** The front matter of a `SKILL.md`, as the Agent Skills format defines it. */
export type SkillFrontMatter = z.infer<typeof frontMatterSchema>;

/** A parsed `SKILL.md`. */
export type ParsedSkillMarkdown = {
  /** The validated front matter. */
  frontMatter: SkillFrontMatter;
  /** The markdown after the closing `---` line. */
  body: string;
};

/**
 * Parses a `SKILL.md` and checks its front matter against the Agent Skills
 * format: YAML between a first line `---` and the next `---` line, `name`
 * 1-64 of `a-z 0-9 -` (no leading, trailing or double hyphen) equal to the
 * folder name, `description` 1-1024 characters; `license`, `compatibility`
 * (1-500), `metadata` (string to string) and `allowed-tools` typed when
 * present. Throws {@link SkillFrontMatterError} listing every problem.
 *
 * @example
 * ```ts
 * const { frontMatter, body } = parseSkillMarkdown({ skillName: 'red-proof', text });
 * ```
 */
export function parseSkillMarkdown({
  skillName,
  text,
}: {
  skillName: string;
  text: string;
}): ParsedSkillMarkdown {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  const lines = normalized.split('\n');
  if (lines[0]?.trimEnd() !== '---') {
    throw new SkillFrontMatterError({
      skillName,
      problems: [
        'it must start with a "---" line opening the YAML front matter',
      ],
    });
  }
  const closing = lines.findIndex(
    (line, index) => index > 0 && line.trimEnd() === '---',
  );
  if (closing === -1) {
    throw new SkillFrontMatterError({
      skillName,
      problems: ['the front matter has no closing "---" line'],
    });
  }
  let data: unknown;
  try {
    data = parseYaml(lines.slice(1, closing).join('\n'));
  } catch (error) {
    throw new SkillFrontMatterError({
      skillName,
      problems: [
        `the front matter is not valid YAML (${(error as Error).message.split('\n')[0]})`,
      ],
    });
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new SkillFrontMatterError({
      skillName,
      problems: ['the front matter must be a YAML mapping'],
    });
  }
  const result = frontMatterSchema.safeParse(data);
  const problems = result.success
    ? []
    : result.error.issues.map(
        (issue) => `${issue.path.join('.') || 'front matter'} ${issue.message}`,
      );
  const name = (data as Record<string, unknown>)['name'];
  if (typeof name === 'string' && name !== skillName) {
    problems.push(`name "${name}" must equal the folder name "${skillName}"`);
  }
  if (!result.success || problems.length > 0) {
    throw new SkillFrontMatterError({ skillName, problems });
  }
  return {
    frontMatter: result.data,
    body: lines.slice(closing + 1).join('\n'),
  };
}
