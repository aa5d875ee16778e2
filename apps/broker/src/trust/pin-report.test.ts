import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { describePins, formatPendingPins } from './pin-report.js';
import { PinStore } from './pin-store.js';
import { revealInvisible } from './sanitize.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'heretek-pin-report-'));
  return () => rm(directory, { recursive: true, force: true });
});

const tool = (description: string) => ({
  name: 'notes_add',
  description,
  inputSchema: { type: 'object' },
  annotations: { readOnlyHint: true },
});

describe('pin reports', () => {
  it('describe the pins file for --check, with changed tools', async () => {
    const file = path.join(directory, 'pins.json');
    const store = await PinStore.open({ path: file });
    await store.observe([
      tool('Add a note.'),
      { ...tool('x'), name: 'notes_list' },
    ]);
    expect(describePins(store)).toBe(`pins file ${file}: 2 tools pinned`);
    await store.observe([tool('Add a note.\u{E0049}')]);
    expect(describePins(store)).toBe(
      `pins file ${file}: 2 tools pinned, 1 changed (notes_add); review and accept with --pin <tool>, or --pin for all`,
    );
  });

  it('show a person the hidden characters of a change before --pin accepts it', async () => {
    const store = await PinStore.open({
      path: path.join(directory, 'pins.json'),
    });
    await store.observe([tool('Add a note.')]);
    await store.observe([tool('Add a note.\u{E0049}\u{E0067}\u001B[2J')]);
    expect(formatPendingPins(store.pending())).toBe(
      [
        '1 tool to accept:',
        'notes_add: changed: description',
        '  description was "Add a note."',
        '  description is now "Add a note.\\u{E0049}\\u{E0067}\\u001b[2J"',
      ].join('\n'),
    );
    expect(formatPendingPins([])).toBe(
      'Nothing to accept: every listed tool matches its pin.',
    );
  });

  it('revealInvisible keeps tabs and line feeds and shows the rest', () => {
    expect(revealInvisible('a\tb\nc\u200Bd\u0007')).toBe(
      'a\tb\nc\\u{200B}d\\u{7}',
    );
  });
});
