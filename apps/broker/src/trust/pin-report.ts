import { changeSummary } from './definition-hash.js';
import type { AcceptedPin, PinStore, ReadOnlyReason } from './pin-store.js';
import { revealInvisible } from './sanitize.js';

/** What `--check` reports about the pins file. */
export type PinsDescription = {
  file: string;
  /** Tools with a pin in the file (or in memory when it could not be saved). */
  pinned: number;
  readOnly: ReadOnlyReason | undefined;
  /** Observed tools whose definition differs from their pin, sorted. */
  changed: string[];
  /** Observed tools absent from a read-only pins file, sorted. */
  unpinned: string[];
};

/** Summarizes a store after discovery, for `--check`. */
export function describePins(store: PinStore): PinsDescription {
  const pending = store.pending();
  return {
    file: store.path,
    pinned: store.pinnedCount,
    readOnly: store.readOnlyReason,
    changed: pending
      .filter((pin) => pin.change !== 'new')
      .map((pin) => pin.name),
    unpinned: pending
      .filter((pin) => pin.change === 'new')
      .map((pin) => pin.name),
  };
}

const READ_ONLY_TEXT: Record<ReadOnlyReason, string> = {
  option: 'read-only',
  file: 'read-only, marked "readOnly": true',
  unwritable: 'read-only, not writable',
};

/**
 * One `--check` line, e.g.
 * `pins file /home/a/.local/state/heretek/pins.json: 412 tools pinned, 1 changed (github_create_issue); accept with --pin <tool>`.
 */
export function formatPinsDescription(description: PinsDescription): string {
  const parts = [`${description.pinned} tools pinned`];
  if (description.readOnly !== undefined) {
    parts.push(READ_ONLY_TEXT[description.readOnly]);
  }
  const list = (names: string[]) =>
    names.length <= 5
      ? names.join(', ')
      : `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
  if (description.changed.length > 0) {
    parts.push(
      `${description.changed.length} changed (${list(description.changed)})`,
    );
  }
  if (description.unpinned.length > 0) {
    parts.push(
      `${description.unpinned.length} not in the pins file (${list(description.unpinned)})`,
    );
  }
  const pending = description.changed.length + description.unpinned.length;
  return `pins file ${description.file}: ${parts.join(', ')}${pending > 0 ? '; review and accept with --pin <tool>, or --pin for all' : ''}`;
}

/**
 * What `--pin [tool]` shows before accepting: one block per tool, its name
 * and what changed (the `describeChange` lines, indented), or a line saying
 * there is nothing to accept. Descriptions are quoted as listed, with every
 * invisible or control character shown as `\u{…}` (see `revealInvisible`), so
 * the person accepting sees hidden text and no escape sequence reaches the
 * terminal.
 */
export function formatPendingPins(pending: readonly AcceptedPin[]): string {
  if (pending.length === 0) {
    return 'Nothing to accept: every listed tool matches its pin.';
  }
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
