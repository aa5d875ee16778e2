import { spawn } from 'node:child_process';
import {
  appendFile,
  mkdir,
  readFile,
  readdir,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAppender } from './__fixtures__/compile-usage-log.js';
import { UsageLog } from './usage-log.js';
import { freshStateFile } from '../__fixtures__/state-file.js';

let directory: string;
let file: string;

freshStateFile('heretek-usage-', 'usage.jsonl', (paths) => {
  ({ directory, file } = paths);
});

const at = new Date('2026-11-30T12:00:00.000Z');

/** The file is compacted over 2 MiB, to its newest 1.5 MiB (documented in the README). */
const MAX_BYTES = 2 * 1024 * 1024;
const COMPACT_TO_BYTES = 1.5 * 1024 * 1024;
/** Terms kept per use. */
const MAX_TERMS = 32;

/** A valid usage line (with its newline) of `tool` whose first term is `n<number>`. */
function usageLine(tool: string, number: number, padding = 0): string {
  const terms = [
    `n${number}`,
    ...Array.from({ length: padding }, () => 'p'.repeat(60)),
  ];
  return `${JSON.stringify({ v: 1, at: at.toISOString(), tool, terms })}\n`;
}

/**
 * Appends uses `n<from>`, `n<from + 1>`, ... of `tool` to the file until it
 * holds just under `bytes`; returns the next number.
 */
async function fillTo(bytes: number, tool: string, from = 0): Promise<number> {
  await mkdir(path.dirname(file), { recursive: true });
  const size = await stat(file).then(
    (info) => info.size,
    () => 0,
  );
  let text = '';
  let next = from;
  for (;;) {
    const line = usageLine(tool, next);
    if (size + text.length + line.length >= bytes) break;
    text += line;
    next += 1;
  }
  await appendFile(file, text);
  return next;
}

describe('UsageLog', () => {
  it('appends one line per use with terms and tool only, mode 0600, and loads it back', async () => {
    const log = new UsageLog({ file });
    expect(await log.load()).toEqual({
      status: { ok: true },
      records: [],
      corruptLines: 0,
    });
    expect(
      await log.append({
        terms: ['create', 'issue'],
        tool: 'github_create_issue',
        at,
      }),
    ).toEqual({ ok: true });
    await log.append({ terms: ['tap'], tool: 'adb_tap', at });
    expect(await readFile(file, 'utf8')).toBe(
      '{"v":1,"at":"2026-11-30T12:00:00.000Z","tool":"github_create_issue","terms":["create","issue"]}\n' +
        '{"v":1,"at":"2026-11-30T12:00:00.000Z","tool":"adb_tap","terms":["tap"]}\n',
    );
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    const loaded = await log.load();
    expect(loaded.records).toEqual([
      {
        at: at.toISOString(),
        tool: 'github_create_issue',
        terms: ['create', 'issue'],
      },
      { at: at.toISOString(), tool: 'adb_tap', terms: ['tap'] },
    ]);
    expect(await readdir(path.dirname(file))).toEqual(['usage.jsonl']);
  });

  it('caps the terms of a use and records nothing without terms or tool', async () => {
    const log = new UsageLog({ file });
    const terms = [
      ' padded ',
      '',
      'x'.repeat(65),
      ...Array.from({ length: 40 }, (_, index) => `t${index}`),
    ];
    await log.append({ terms, tool: 'a_b', at });
    const [record] = (await log.load()).records;
    expect(record?.terms).toHaveLength(MAX_TERMS);
    expect(record?.terms.slice(0, 2)).toEqual(['padded', 't0']);
    expect(await log.append({ terms: [' '], tool: 'a_b' })).toMatchObject({
      ok: false,
      problem: 'empty-use',
    });
    expect(await log.append({ terms: ['a'], tool: '' })).toMatchObject({
      ok: false,
      problem: 'empty-use',
    });
    expect((await log.load()).records).toHaveLength(1);
  });

  it('compacts over its cap, keeping the newest uses', async () => {
    const first = await fillTo(MAX_BYTES, 'a_tool');
    const log = new UsageLog({ file });
    for (let index = first; index < first + 200; index += 1) {
      await log.append({ terms: [`n${index}`], tool: 'a_tool', at });
      expect((await stat(file)).size).toBeLessThanOrEqual(MAX_BYTES);
    }
    const { records } = await log.load();
    const numbers = records.map((record) => Number(record.terms[0]?.slice(1)));
    const last = first + 199;
    expect(numbers.at(-1)).toBe(last);
    expect(numbers).toEqual(
      Array.from(
        { length: numbers.length },
        (_, index) => last + 1 - numbers.length + index,
      ),
    );
    const longest = usageLine('a_tool', last).length;
    const shortest = usageLine('a_tool', 0).length;
    expect(numbers.length).toBeGreaterThan(COMPACT_TO_BYTES / longest - 1);
    expect(numbers.length).toBeLessThan(MAX_BYTES / shortest);
    expect(numbers.length).toBeLessThan(last + 1);
  });

  it('skips corrupt lines with one warning, repairs a cut last line, drops corrupt lines on compaction', async () => {
    await mkdir(path.dirname(file), { recursive: true });
    const good =
      '{"v":1,"at":"2026-11-30T12:00:00.000Z","tool":"a_b","terms":["x"]}';
    await writeFile(
      file,
      [
        good,
        'not json',
        '{"v":2,"at":"2026-11-30T12:00:00.000Z","tool":"a_b","terms":["x"]}',
        '{"v":1,"at":"yesterday","tool":"a_b","terms":["x"]}',
        '{"v":1,"at":"2026-11-30T12:00:00.000Z","tool":"a_b","terms":[]}',
        good,
        '{"v":1,"at":"2026-11-30T12:00',
      ].join('\n'),
    );
    const lines: string[] = [];
    const log = new UsageLog({ file, log: (line) => lines.push(line) });
    const loaded = await log.load();
    expect(loaded.records).toHaveLength(2);
    expect(loaded.corruptLines).toBe(5);
    expect(lines).toEqual([
      `usage file ${file}: skipped 5 corrupt lines (first at line 2); they are dropped at the next compaction. Line 2: not JSON`,
    ]);
    await log.append({ terms: ['y'], tool: 'c_d', at });
    const after = await log.load();
    expect(after.records.map((record) => record.tool)).toEqual([
      'a_b',
      'a_b',
      'c_d',
    ]);
    // Appends over the cap compact the file: corrupt lines go first.
    await fillTo(MAX_BYTES, 'c_d', 100);
    for (let index = 0; index < 10; index += 1)
      await log.append({ terms: [`n${index}`], tool: 'c_d', at });
    const compacted = await log.load();
    expect(compacted.corruptLines).toBe(0);
    expect(compacted.records.at(-1)?.terms).toEqual(['n9']);
  });

  it('survives a file it cannot write or read, and says so once', async () => {
    await writeFile(path.join(directory, 'plain'), 'x');
    const lines: string[] = [];
    const blocked = new UsageLog({
      file: path.join(directory, 'plain', 'usage.jsonl'),
      log: (line) => lines.push(line),
    });
    const first = await blocked.append({ terms: ['a'], tool: 'a_b' });
    const second = await blocked.append({ terms: ['b'], tool: 'a_b' });
    expect(first).toMatchObject({ ok: false, problem: 'unwritable' });
    expect(second).toMatchObject({ ok: false, problem: 'unwritable' });
    expect(await blocked.load()).toMatchObject({
      status: { ok: true },
      records: [],
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /usage file .* is unwritable \(.*\); search keeps working/,
    );

    const directoryAsFile = path.join(directory, 'a-directory');
    await mkdir(directoryAsFile);
    const unreadable = new UsageLog({
      file: directoryAsFile,
      log: (line) => lines.push(line),
    });
    expect((await unreadable.load()).status).toMatchObject({
      ok: false,
      problem: 'unreadable',
    });
    expect(
      await unreadable.append({ terms: ['a'], tool: 'a_b' }),
    ).toMatchObject({
      ok: false,
      problem: 'unwritable',
    });
    expect(await unreadable.describe()).toMatch(/is unreadable/);
  });

  it('refuses to follow a symlink planted at its path', async () => {
    await mkdir(path.dirname(file), { recursive: true });
    const victim = path.join(directory, 'victim.txt');
    await writeFile(victim, 'untouched\n');
    await symlink(victim, file);
    const log = new UsageLog({ file });
    expect(await log.append({ terms: ['a'], tool: 'a_b' })).toMatchObject({
      ok: false,
      problem: 'unwritable',
    });
    expect(await readFile(victim, 'utf8')).toBe('untouched\n');
  });

  it('is disabled by off', async () => {
    const log = new UsageLog({ file: 'off' });
    expect(log.enabled).toBe(false);
    expect(log.file).toBeUndefined();
    expect(await log.append({ terms: ['a'], tool: 'a_b' })).toMatchObject({
      problem: 'disabled',
    });
    expect((await log.load()).records).toEqual([]);
    expect(await log.describe()).toBe(
      'usage file: off (learning from use is disabled)',
    );
  });

  it('describes the file for --check', async () => {
    const log = new UsageLog({ file });
    expect(await log.describe()).toBe(
      `usage file ${file}: not created yet (0 uses)`,
    );
    await log.append({ terms: ['a'], tool: 'a_b', at });
    await log.append({ terms: ['b'], tool: 'a_b', at });
    expect((await stat(file)).size).toBe(134);
    expect(await log.describe()).toBe(
      `usage file ${file}: 134 B, 2 uses (compacted over 2.0 MiB)`,
    );
  });

  it('loads only valid lines, naming what is wrong with the first other one', async () => {
    /** The use of a file holding `line` alone, or the problems logged for it. */
    const checkUsageLine = async (
      line: string,
    ): Promise<{ record: unknown } | { problems: string[] }> => {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, `${line}\n`);
      const lines: string[] = [];
      const { records } = await new UsageLog({
        file,
        log: (logged) => lines.push(logged),
      }).load();
      if (records.length === 1) return { record: records[0] };
      const [, problems = ''] = lines[0]?.split('. Line 1: ') ?? [];
      return { problems: problems.split('; ') };
    };
    expect(
      await checkUsageLine(
        '{"v":1,"at":"2026-01-01T00:00:00Z","tool":"a","terms":["b"]}',
      ),
    ).toEqual({
      record: { at: '2026-01-01T00:00:00Z', tool: 'a', terms: ['b'] },
    });
    expect(
      await checkUsageLine(
        '{"v":1,"at":"2026-01-01T00:00:00Z","tool":"a","terms":[1]}',
      ),
    ).toEqual({ problems: ['terms[0] must be a search term, got number 1'] });
    expect(await checkUsageLine('[]')).toEqual({
      problems: ['the line must be a JSON object, got an array'],
    });
    expect(
      await checkUsageLine(
        '{"v":2,"at":"yesterday","tool":"","terms":["ok",""]}',
      ),
    ).toEqual({
      problems: [
        'v must be 1 (the only usage line version), got number 2',
        'at is not a time: give an ISO 8601 time',
        'tool must be a qualified tool name, got the string ""',
      ],
    });
    expect(
      await checkUsageLine(
        '{"v":1,"at":"2026-11-30T12:00:00.000Z","tool":"a_b","terms":["ok",""]}',
      ),
    ).toEqual({
      problems: ['terms[1] must be a search term, got the string ""'],
    });
    expect(
      await checkUsageLine(
        '{"v":1,"at":"yesterday","tool":"a_b","terms":["x"]}',
      ),
    ).toEqual({ problems: ['at is not a time: give an ISO 8601 time'] });
  });
});

function run(
  script: string,
  args: string[],
  onReady: () => void,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    child.once('message', onReady);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('two broker processes on one usage file', () => {
  const COUNT = 500;

  /** Two writers appending at once, each use with `padding` long terms. */
  async function writers(padding: number) {
    const script = await writeAppender(path.join(directory, 'compiled'));
    const go = path.join(directory, 'go');
    let ready = 0;
    const results = await Promise.all(
      ['one', 'two'].map((writer) =>
        run(script, [file, writer, String(COUNT), String(padding), go], () => {
          ready += 1;
          if (ready === 2) void writeFile(go, '');
        }),
      ),
    );
    for (const result of results) {
      expect(result).toEqual({ code: 0, stderr: '' });
    }
    const { records, corruptLines } = await new UsageLog({ file }).load();
    expect(corruptLines).toBe(0);
    const byWriter = (writer: string) =>
      records
        .filter((record) => record.tool === `${writer}_tool`)
        .map((record) => Number(record.terms[0]?.slice(1)));
    return { records, one: byWriter('one'), two: byWriter('two') };
  }

  it('lose no append', async () => {
    const { records, one, two } = await writers(0);
    const all = Array.from({ length: COUNT }, (_, index) => index);
    expect(one).toEqual(all);
    expect(two).toEqual(all);
    expect(records).toHaveLength(2 * COUNT);
    // The two processes really wrote at the same time.
    const switches = records.filter(
      (record, index) => index > 0 && record.tool !== records[index - 1]?.tool,
    ).length;
    expect(switches).toBeGreaterThan(1);
  });

  it('lose no append while compacting: every use of both writers is kept', async () => {
    // Uses of 1.2 KB each from a file just under the cap: the writers' 1.2 MB
    // make it compact three times while they append, and the newest 1.5 MiB
    // kept each time hold every use they made.
    const prefilled = await fillTo(MAX_BYTES - 1024, 'old_tool');
    const { records, one, two } = await writers(18);
    const all = Array.from({ length: COUNT }, (_, index) => index);
    expect(one).toEqual(all);
    expect(two).toEqual(all);
    const old = records.filter((record) => record.tool === 'old_tool').length;
    expect(old).toBeLessThan(prefilled);
    expect((await stat(file)).size).toBeLessThanOrEqual(MAX_BYTES);
  });
});
