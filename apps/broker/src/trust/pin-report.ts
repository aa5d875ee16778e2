import { changeSummary } from './definition-hash.js';
import type { AcceptedPin, PinStore, ReadOnlyReason } from './pin-store.js';
import { revealInvisible } from './sanitize.js';

const READ_ONLY_TEXT: Record<ReadOnlyReason, string> = {
  option: 'read-only',
  file: 'read-only, marked "readOnly": true',
  unwritable: 'read-only, not writable',
};

/** The `--check` line about a store after discovery, e.g. `pins file /home/a/.local/state/heretek/pins.json: 412 tools pinned, 1 changed (github_create_issue); review and accept with --pin <tool>, or --pin for all`: the tools pinned (in the file, or in memory when it could not be saved), then the observed tools that differ from their pin, or are absent from a read-only pins file. */
export function describePins(store: PinStore): string {
  const pending = store.pending();
  const parts = [`${store.pinnedCount} tools pinned`];
  if (store.readOnlyReason !== undefined)
    parts.push(READ_ONLY_TEXT[store.readOnlyReason]);
  const list = (names: string[]) =>
    names.length <= 5
      ? names.join(', ')
      : `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
  for (const [what, pins] of [
    ['changed', pending.filter((pin) => pin.change !== 'new')],
    ['not in the pins file', pending.filter((pin) => pin.change === 'new')],
  ] as const)
    if (pins.length > 0)
      parts.push(
        `${pins.length} ${what} (${list(pins.map((pin) => pin.name))})`,
      );
  return `pins file ${store.path}: ${parts.join(', ')}${pending.length > 0 ? '; review and accept with --pin <tool>, or --pin for all' : ''}`;
}

/** What `--pin [tool]` shows before accepting: one block per tool, its name and what changed (the `describeChange` lines, indented), or a line saying there is nothing to accept. Descriptions are quoted as listed, with every invisible or control character shown as `\u{…}` (see `revealInvisible`), so the person accepting sees hidden text and no escape sequence reaches the terminal. */
export function formatPendingPins(pending: readonly AcceptedPin[]): string {
  if (pending.length === 0)
    return 'Nothing to accept: every listed tool matches its pin.';
  const blocks = pending.map((pin) => {
    const head =
      pin.change === 'new'
        ? `${pin.name}: not pinned yet`
        : `${pin.name}: changed: ${changeSummary(pin.change)}`;
    return [head, ...pin.lines.map((line) => `  ${line}`)]
      .map(revealInvisible)
      .join('\n');
  });
  return `${pending.length} tool${pending.length === 1 ? '' : 's'} to accept:\n${blocks.join('\n')}`;
}
