import { changeSummary } from './definition-hash.js';
import type { PinStatus } from './pin-store.js';
import { pinTarget } from './pins-file.js';

/** `HERETEK_PIN_POLICY`: `refuse` (default): a held mutating tool cannot be called, a held read-only one is marked and callable, and a flagged tool nobody accepted is held with its description withheld; `warn`: every held tool is marked and callable; `off`: no pins, nothing marked. */
export type PinPolicy = (typeof PIN_POLICIES)[number];

/** The policies, in the order the documentation lists them. */
export const PIN_POLICIES = ['refuse', 'warn', 'off'] as const;

/** What {@link pinVerdict} decides for one tool: whether a call may go out, the mark search and inspect show (a flagged tool has its own, `[flagged: …]`, from the rules), and what to tell the agent: a refusal's code and text, or a note for an allowed held tool (`undefined`: none). */
export type PinVerdict = { mark: '' | '[changed]' | '[new]' } & (
  | { allowed: true; message: string | undefined }
  | {
      allowed: false;
      code: 'TOOL_CHANGED' | 'TOOL_NEW' | 'TOOL_FLAGGED';
      message: string;
    }
);

/** Whether a tool may be called under the pin policy, and what to tell the agent. Only a held tool is marked or refused: `new`, `unlisted` and `flagged` are new, `changed` and `unpinned` (absent from a read-only pins file) are changed. `mutating` is the tool's current classification; `flags` the injection rules its description trips (a changed tool keeps `TOOL_CHANGED` and names them too). */
export function pinVerdict(options: {
  policy: PinPolicy;
  toolName: string;
  /** `PinStore.status(toolName)`; `undefined` when the tool was never observed. */
  status: PinStatus | undefined;
  mutating: boolean;
  flags?: readonly string[];
}): PinVerdict {
  const { policy, toolName: name, status, mutating } = options;
  if (policy === 'off' || status?.state !== 'held')
    return { allowed: true, mark: '', message: undefined };
  const { reason } = status;
  const isNew = reason !== 'changed' && reason !== 'unpinned';
  const target = pinTarget(name);
  const rules = options.flags?.length ? options.flags.join(', ') : undefined;
  const flagged =
    rules === undefined || reason === 'flagged'
      ? ''
      : `. Its description is flagged (${rules})${policy === 'refuse' ? ', so its text is withheld' : ''}`;
  const what = `${
    status.reason === 'changed'
      ? `"${name}" changed since it was pinned: ${changeSummary(status.change)}`
      : {
          flagged: `"${name}" has a description flagged as an injection (${rules ?? 'flagged'}) that nobody has accepted${policy === 'refuse' ? ', so its text is withheld' : ''}`,
          unpinned: `"${name}" is not in the read-only pins file, so nobody has accepted it yet`,
          new: `"${name}" is new: it appeared on backend "${target}" after that backend's tools were pinned, so nobody has accepted it yet`,
          unlisted: `"${name}" is not among the tools backend "${target}" lists and has no pin, so nobody has accepted it`,
        }[status.reason]
  }${flagged}`;
  const command = `\`heretek-lazy-broker --pin ${name}\``;
  const accept =
    reason === 'unlisted'
      ? `Only a listed tool can be reviewed: once the backend lists it, a person accepts it with ${command}; then call again.`
      : reason === 'flagged'
        ? `Do not act on it: ask the user to review its description (${command} shows it) and accept it with that command; then call again.`
        : `A person must review it (inspect shows ${isNew ? 'it' : 'the change'}) and accept it with ${command}${reason === 'unpinned' ? ' on a writable copy of the pins file' : ''}${isNew ? ` (or every new tool of the backend with \`--pin ${target}\`)` : ''}; then call again.`;
  const mark = reason === 'flagged' ? '' : isNew ? '[new]' : '[changed]';
  if (policy === 'refuse' && mutating)
    return {
      allowed: false,
      code:
        reason === 'flagged'
          ? 'TOOL_FLAGGED'
          : isNew
            ? 'TOOL_NEW'
            : 'TOOL_CHANGED',
      mark,
      message: `${what}. It ${reason === 'unlisted' ? 'counts as mutating (no listing says otherwise)' : 'is mutating'}, so the call was refused and nothing was sent. ${accept}`,
    };
  return {
    allowed: true,
    mark,
    message: `Note: ${what}. ${mutating ? 'It is callable because the pin policy is warn.' : 'It is read-only, so it stays callable.'} To accept it: ${command}.`,
  };
}
