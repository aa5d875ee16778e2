import { canCallMutating, type RoleName } from '@heretek/prefix';
import { quote } from './errors.js';
import { pinVerdict } from './trust/pin-policy.js';

/** What {@link authorise} decides for one call. */
export type Authorisation =
  | {
      allowed: true;
      /** Whether the tool counts as mutating (a tool outside the catalog does). */
      mutating: boolean;
    }
  | {
      allowed: false;
      code: 'ROLE_FORBIDDEN' | 'TOOL_CHANGED' | 'TOOL_NEW' | 'TOOL_FLAGGED';
      /** What the agent reads after the code: what was refused and how to go on. */
      message: string;
    };

/**
 * Whether one call may go out: the role (a read-only role calls only read-only tools; a tool
 * outside the catalog counts as mutating), then the pin (`TOOL_CHANGED`, `TOOL_NEW`, `TOOL_FLAGGED`).
 */
export function authorise(options: {
  role: RoleName;
  /** The tool's exact name, as the caller gave it. */
  name: string;
  /** The tool's catalog entry; `undefined` for a name outside the catalog. */
  entry: { mutating: boolean } | undefined;
  /** The pin policy, the tool's pin status and the injection rules it trips; `undefined` without a trust layer. */
  pin:
    Omit<Parameters<typeof pinVerdict>[0], 'toolName' | 'mutating'> | undefined;
}): Authorisation {
  const { role, name, entry, pin } = options;
  const mutating = entry?.mutating ?? true;
  if (mutating && !canCallMutating(role))
    return {
      allowed: false,
      code: 'ROLE_FORBIDDEN',
      message:
        entry === undefined
          ? `Role "${role}" is read-only and ${quote(name)} is not in the catalog, so it counts as mutating. Nothing was sent. Search for a read-only tool, or hand this work to a writer role.`
          : `Role "${role}" is read-only and ${quote(name)} can change state (not marked read-only). Nothing was sent. Hand this work to a writer role.`,
    };
  if (pin !== undefined) {
    const verdict = pinVerdict({ ...pin, toolName: name, mutating });
    if (!verdict.allowed)
      return {
        allowed: false,
        code: verdict.code,
        message: verdict.message,
      };
  }
  return { allowed: true, mutating };
}
