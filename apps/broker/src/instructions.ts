/**
 * The server `instructions` of the `initialize` answer: what the meta-tools are for, what
 * they reach, and to search before saying a tool does not exist. Built from the configured
 * backend table alone (never discovery), so a prompt cache keeps it, and bounded: targets are
 * named under their profile up to the limits below, beyond them only profiles are counted;
 * the largest text stays under 2 KB, where Claude Code cuts server instructions.
 */
import { PROFILE_PURPOSES, isProfileName } from '@heretek/internal';
import {
  META_TOOLS,
  META_TOOL_NAMES,
  type MetaToolName,
} from './meta-tools.js';

/** The meta-tool the last line asks an agent to search with. */
const SEARCH_TOOL: MetaToolName = 'mcp_search_tools';

/** Most targets named one by one; a larger table lists profiles only. */
const MAX_LISTED_TARGETS = 40;
/** Most characters of target names listed one by one. */
const MAX_TARGET_LIST_CHARS = 400;
/** Most profiles listed; the rest are counted. */
const MAX_LISTED_PROFILES = 10;
/** Longest profile or target name shown; longer names are cut. */
const MAX_NAME_CHARS = 32;

/** One row of the backend table, as far as the instructions need it. */
export type InstructionsBackend = { target: string; profile: string };

function shown(name: string): string {
  const flat = name.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  return chars.length <= MAX_NAME_CHARS
    ? flat
    : `${chars.slice(0, MAX_NAME_CHARS - 1).join('')}…`;
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Targets per profile: profiles by target count (most first), then name; targets by name. */
function byProfile(
  backends: readonly InstructionsBackend[],
): Array<[profile: string, targets: string[]]> {
  const groups = new Map<string, Set<string>>();
  for (const { target, profile } of backends) {
    const key = shown(profile);
    groups.set(key, (groups.get(key) ?? new Set()).add(shown(target)));
  }
  return [...groups]
    .map(([profile, targets]): [string, string[]] => [
      profile,
      [...targets].sort(compare),
    ])
    .sort(
      ([leftName, left], [rightName, right]) =>
        right.length - left.length || compare(leftName, rightName),
    );
}

function profileLine(profile: string, targets: string[], named: boolean) {
  const purpose = isProfileName(profile)
    ? ` (${PROFILE_PURPOSES[profile]})`
    : '';
  const what = named
    ? targets.join(', ')
    : `${targets.length} target${targets.length === 1 ? '' : 's'}`;
  return `- ${profile}${purpose}: ${what}`;
}

/** The instructions for a backend table, by the rule in this module's header. */
export function buildInstructions(options: {
  backends: readonly InstructionsBackend[];
}): string {
  const groups = byProfile(options.backends);
  const count = (of: typeof groups) =>
    of.reduce((sum, [, targets]) => sum + targets.length, 0);
  const targetCount = count(groups);
  const nameChars = groups.reduce(
    (sum, [, targets]) => sum + targets.join(', ').length,
    0,
  );
  const named =
    targetCount <= MAX_LISTED_TARGETS && nameChars <= MAX_TARGET_LIST_CHARS;
  const listed = groups.slice(0, MAX_LISTED_PROFILES);
  const rest = groups.slice(MAX_LISTED_PROFILES);
  const plural = (count: number, word: string) =>
    `${count} ${word}${count === 1 ? '' : 's'}`;
  return [
    `This server is a broker in front of ${plural(targetCount, 'backend target')} in ${plural(groups.length, 'profile')}. Their tools are not listed one by one: find and use them with ${META_TOOL_NAMES.length} tools.`,
    ...META_TOOL_NAMES.map(
      (name) => `- ${name}: ${META_TOOLS[name].instructions}`,
    ),
    named
      ? 'Targets by profile:'
      : 'Profiles, with how many targets each (search within a profile to see its tools):',
    ...listed.map(([profile, targets]) => profileLine(profile, targets, named)),
    ...(rest.length === 0
      ? []
      : [
          `- and ${plural(rest.length, 'more profile')} with ${plural(count(rest), 'target')}`,
        ]),
    `Before saying that a tool or a capability does not exist, search for it with ${SEARCH_TOOL}, with other words or within a profile.`,
  ].join('\n');
}
