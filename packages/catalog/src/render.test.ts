import { describe, expect, it } from 'vitest';
import { ToolCatalog } from './catalog.js';
import { toolEntryFromMcpTool } from './entries.js';
import { compactDescription, renderHit } from './render.js';

describe('renderHit', () => {
  it('renders name, flag and one-line description', () => {
    expect(
      renderHit({
        name: 'adb_tap',
        target: 'adb',
        description: 'Tap\n the screen',
        mutating: true,
        score: 1,
      }),
    ).toBe('adb_tap [mutating] - Tap the screen');
    expect(
      renderHit({
        name: 'core_read_file',
        target: 'core',
        description: '',
        mutating: false,
        score: 1,
      }),
    ).toBe('core_read_file [read-only]');
  });

  it('trims long descriptions at a word boundary', () => {
    const long = 'alpha beta gamma delta '.repeat(20);
    const short = compactDescription(long, 40);
    expect(short.length).toBeLessThanOrEqual(40);
    expect(short.endsWith('…')).toBe(true);
    expect(long.startsWith(short.slice(0, -1))).toBe(true);
    expect(long.charAt(short.length - 1)).toBe(' ');
  });

  it('does not split surrogate pairs', () => {
    const text = '😀'.repeat(300);
    const short = compactDescription(text, 20);
    expect(Array.from(short)).toHaveLength(20);
    expect(short.includes('\uFFFD')).toBe(false);
  });

  it('appends marks after the description', () => {
    expect(
      renderHit({ name: 'x_tool', description: 'Does it.', mutating: false }, [
        '[changed]',
        '[flagged: rule]',
      ]),
    ).toBe('x_tool [read-only] - Does it. [changed] [flagged: rule]');
    expect(
      renderHit({ name: 'x_tool', description: '', mutating: true }, [
        '[changed]',
      ]),
    ).toBe('x_tool [mutating] [changed]');
  });

  it('keeps graphemes whole when the cut falls inside an emoji or combining sequence', () => {
    const family = '👨\u200D👩\u200D👧'; // five code points, one grapheme
    const emojiCut = compactDescription(family.repeat(60), 20);
    // Three families are 15 code points; a fourth would pass the 19 before the ellipsis.
    expect(emojiCut).toBe(`${family.repeat(3)}…`);
    const accented = 'e\u0301\u0327'; // e with two combining marks, one grapheme
    const combiningCut = compactDescription(`abcdef${accented.repeat(20)}`, 11);
    // Ten code points fit before the ellipsis: the second cluster would be cut after its "e".
    expect(combiningCut).toBe(`abcdef${accented}…`);
    const segments = [
      ...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(
        combiningCut.slice(0, -1),
      ),
    ].map((part) => part.segment);
    expect(segments.slice(6)).toEqual([accented]);
  });

  it('gives search hits whole graphemes at the 160 code point cut', () => {
    const family = '👨\u200D👩\u200D👧';
    // 157 code points of text, so the cut at 159 falls inside the family emoji.
    const description = `${'a'.repeat(157)}${family} more words`;
    const catalog = new ToolCatalog({
      tools: [
        toolEntryFromMcpTool({
          backend: { backend: 'x', target: 'x', profile: 'core' },
          tool: { name: 'alpha', description },
        }),
      ],
    });
    const hit = catalog.search({ query: 'x_alpha' }).hits[0];
    expect(hit?.description).toBe(`${'a'.repeat(157)}…`);
    expect(hit?.description.includes('\u200D')).toBe(false);
    expect(renderHit(hit as NonNullable<typeof hit>)).toBe(
      `x_alpha [mutating] - ${'a'.repeat(157)}…`,
    );
  });
});
