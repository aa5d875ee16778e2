import { describe, expect, it } from 'vitest';
import { LineLimit, type DroppedLine } from './line-limit.js';

/** Feeds `chunks` through a LineLimit and collects what comes out and what was dropped. */
async function run(
  max: number,
  chunks: string[],
): Promise<{ out: string; dropped: DroppedLine[] }> {
  const dropped: DroppedLine[] = [];
  const limit = new LineLimit(max, (line) => dropped.push(line));
  let out = '';
  limit.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const ended = new Promise((resolve) => limit.once('end', resolve));
  for (const chunk of chunks) limit.write(Buffer.from(chunk));
  limit.end();
  await ended;
  return { out, dropped };
}

describe('LineLimit', () => {
  it('passes lines through unchanged, however the input is cut into chunks', async () => {
    const input = '{"a":1}\n{"b":2}\n\n{"c":3}\n';
    for (const size of [1, 2, 3, 7, input.length]) {
      const chunks: string[] = [];
      for (let i = 0; i < input.length; i += size)
        chunks.push(input.slice(i, i + size));
      const { out, dropped } = await run(64, chunks);
      expect(out).toBe(input);
      expect(dropped).toEqual([]);
    }
  });

  it('drops a line over the limit, across chunks, and keeps the lines around it', async () => {
    const long = `{"jsonrpc":"2.0","id":7,"method":"x","params":{"p":"${'y'.repeat(200)}"}}`;
    const { out, dropped } = await run(100, [
      '{"ok":1}\n',
      long.slice(0, 50),
      long.slice(50, 150),
      long.slice(150),
      '\n{"ok":2}\n',
    ]);
    expect(out).toBe('{"ok":1}\n{"ok":2}\n');
    expect(dropped).toEqual([{ bytes: long.length, id: 7 }]);
  });

  it('finds the id at the end of the line (the SDK client writes it last), or reports none', async () => {
    const tail = `{"method":"ping","params":{"pad":"${'z'.repeat(300)}"},"jsonrpc":"2.0","id":"r-9"}\n`;
    const nested = `{"method":"x","params":{"pad":"${'z'.repeat(300)}","inner":{"id":5}}}\n`;
    const { dropped } = await run(100, [tail, nested]);
    expect(dropped).toEqual([
      { bytes: tail.length - 1, id: 'r-9' },
      { bytes: nested.length - 1, id: undefined },
    ]);
  });

  it('reports a line over the limit that the input ends inside', async () => {
    const { out, dropped } = await run(10, ['{"id":3,', '"pad":"aaaaaaaaaa"']);
    expect(out).toBe('');
    expect(dropped).toEqual([{ bytes: 26, id: 3 }]);
  });
});
