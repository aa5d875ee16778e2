import { describe, expect, it } from 'vitest';
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
    const short = compactDescription({ description: long, maxChars: 40 });
    expect(short.length).toBeLessThanOrEqual(40);
    expect(short.endsWith('…')).toBe(true);
    expect(long.startsWith(short.slice(0, -1))).toBe(true);
    expect(long.charAt(short.length - 1)).toBe(' ');
  });

  it('does not split surrogate pairs', () => {
    const text = '😀'.repeat(300);
    const short = compactDescription({ description: text, maxChars: 20 });
    expect(Array.from(short)).toHaveLength(20);
    expect(short.includes('\uFFFD')).toBe(false);
  });
});
