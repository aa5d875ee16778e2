import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ROLE_NAMES,
  assemblePrefixCachedPrompt,
  frozenPromptCacheKey,
  splitAtFrozenPrefix,
  type RoleName,
} from '@heretek/prefix';

/** One role's prompt, split where provider caches should break. */
export type RolePrompt = {
  role: RoleName;
  /** The whole system prompt (layers 1-4). */
  prompt: string;
  /** Layers 1+2: the same bytes for every role, profile, folder and day. */
  frozen: string;
  /** Layers 3+4: the role and its profile. */
  rest: string;
};

/** Every role's prompt, the folder they were read from and the cache key of their shared prefix. */
export type RolePrompts = {
  /** The folder whose `roles/` was read: the project's, or the package's own copy. */
  workspaceRoot: string;
  /** Whether the project's own `roles/` was used. */
  fromProject: boolean;
  roles: ReadonlyMap<RoleName, RolePrompt>;
  /** The frozen prefix (layers 1+2), identical across roles. */
  frozen: string;
  /** `heretek-<first 24 hex of the frozen prefix's SHA-256>`: the same for every role and session. */
  promptCacheKey: string;
};

/** The copy of the repository's `roles/` that the build puts beside the bundle. */
export function packagedRolesRoot(): string {
  return fileURLToPath(new URL('.', import.meta.url));
}

/** Whether a folder holds the role prompt sources (`roles/shared/01-context.md`). */
function hasRoles(folder: string): boolean {
  return existsSync(join(folder, 'roles', 'shared', '01-context.md'));
}

/**
 * Assembles the six role prompts with `@heretek/prefix` from the project's
 * `roles/` when it has one, else from the package's own copy, for the given
 * profile (layer 4). Throws the prefix package's errors (an unknown profile,
 * an unreadable role file) as they are.
 */
export function loadRolePrompts(options: {
  directory: string;
  profile: string;
}): RolePrompts {
  const fromProject = hasRoles(options.directory);
  const workspaceRoot = fromProject ? options.directory : packagedRolesRoot();
  const roles = new Map<RoleName, RolePrompt>();
  let promptCacheKey = '';
  for (const role of ROLE_NAMES) {
    const assembled = assemblePrefixCachedPrompt({
      role,
      workspaceRoot,
      activeProfile: options.profile,
    });
    roles.set(role, {
      role,
      prompt: assembled.systemPrompt,
      ...splitAtFrozenPrefix(assembled),
    });
    // The same for every role: the frozen prefix's. Not the key of
    // `toOpenAIPromptCache`, which would also estimate every prompt's tokens
    // for its warnings: seconds and over 100 MiB in OpenCode's runtime at
    // start-up.
    promptCacheKey = frozenPromptCacheKey(assembled);
  }
  return {
    workspaceRoot,
    fromProject,
    roles,
    frozen: roles.get('director')!.frozen,
    promptCacheKey,
  };
}
