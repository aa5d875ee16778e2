import { changeSummary } from './definition-hash.js';
import type { PinStatus } from './pin-store.js';
import { pinTarget } from './pins-file.js';

/**
 * `HERETEK_PIN_POLICY`:
 * - `refuse` (default): a changed or new mutating tool cannot be called; a
 *   changed or new read-only tool is marked and callable.
 * - `warn`: every changed or new tool is marked and callable.
 * - `off`: no pins (the store is not opened; nothing is marked).
 */
export type PinPolicy = (typeof PIN_POLICIES)[number];

/** The policies, in the order the documentation lists them. */
export const PIN_POLICIES = ['refuse', 'warn', 'off'] as const;

/**
 * What {@link pinVerdict} decides for one tool: whether a call may go out,
 * the mark search and inspect show, and what to tell the agent: a refusal's
 * code and text, or a note for an allowed held tool (`undefined`: none).
 */
export type PinVerdict =
  | { allowed: true; mark: '' | Mark; message: string | undefined }
  | {
      allowed: false;
      code: 'TOOL_CHANGED' | 'TOOL_NEW';
      mark: Mark;
      message: string;
    };

type Mark = '[changed]' | '[new]';

/**
 * Decides whether a tool may be called under the pin policy, and what to tell
 * the agent. Only a held tool is marked or refused; its reason decides how:
 * `new` (on a known backend) and `unlisted` (called before its backend lists
 * it) are new, `changed` and `unpinned` (absent from a read-only pins file:
 * nobody has accepted it) are changed. `mutating` is the tool's current
 * classification (unless `readOnlyHint: true`, mutating).
 *
 * @example
 * ```ts
 * const verdict = pinVerdict({ policy: 'refuse', toolName: 'mail_send', mutating: true, status: store.status('mail_send') });
 * if (!verdict.allowed) refuse(verdict.code, verdict.message);
 * ```
 */
export function pinVerdict(options: {
  policy: PinPolicy;
  toolName: string;
  /** `PinStore.status(toolName)`; `undefined` when the tool was never observed. */
  status: PinStatus | undefined;
  mutating: boolean;
}): PinVerdict {
  const { policy, toolName, status, mutating } = options;
  if (policy === 'off' || status?.state !== 'held')
    return { allowed: true, mark: '', message: undefined };
  const { reason } = status;
  const isNew = reason === 'new' || reason === 'unlisted';
  const mark = isNew ? '[new]' : '[changed]';
  const target = pinTarget(toolName);
  const what =
    status.reason === 'changed'
      ? `"${toolName}" changed since it was pinned: ${changeSummary(status.change)}`
      : {
          unpinned: `"${toolName}" is not in the read-only pins file, so nobody has accepted it yet`,
          new: `"${toolName}" is new: it appeared on backend "${target}" after that backend's tools were pinned, so nobody has accepted it yet`,
          unlisted: `"${toolName}" is not among the tools backend "${target}" lists and has no pin, so nobody has accepted it`,
        }[status.reason];
  const accept =
    reason === 'unlisted'
      ? `Only a listed tool can be reviewed: once the backend lists it, a person accepts it with \`heretek-lazy-broker --pin ${toolName}\`; then call again.`
      : `A person must review it (inspect shows ${isNew ? 'it' : 'the change'}) and accept it with \`heretek-lazy-broker --pin ${toolName}\`${reason === 'unpinned' ? ' on a writable copy of the pins file' : ''}${isNew ? ` (or every new tool of the backend with \`--pin ${target}\`)` : ''}; then call again.`;
  if (policy === 'refuse' && mutating) {
    return {
      allowed: false,
      code: isNew ? 'TOOL_NEW' : 'TOOL_CHANGED',
      mark,
      message: `${what}. It ${reason === 'unlisted' ? 'counts as mutating (no listing says otherwise)' : 'is mutating'}, so the call was refused and nothing was sent. ${accept}`,
    };
  }
  return {
    allowed: true,
    mark,
    message: `Note: ${what}. ${mutating ? 'It is callable because the pin policy is warn.' : 'It is read-only, so it stays callable.'} To accept it: \`heretek-lazy-broker --pin ${toolName}\`.`,
  };
}
