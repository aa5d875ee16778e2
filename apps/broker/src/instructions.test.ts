import { DEFAULT_BACKENDS, PROFILE_NAMES } from '@heretek/internal';
import { describe, expect, it } from 'vitest';
import { INSTRUCTIONS_TOKEN_BUDGET, tokens } from './__fixtures__/tokens.js';
import { buildInstructions } from './instructions.js';

/** Most profiles the instructions list; the rest are counted. */
const MAX_LISTED_PROFILES = 10;

describe('buildInstructions', () => {
  it('names the three tools, every default target under its profile, and asks to search first', () => {
    const text = buildInstructions({ backends: DEFAULT_BACKENDS });
    process.stderr.write(
      `instructions, 12 default backends: ${tokens(text)} o200k_base tokens\n`,
    );
    expect(tokens(text)).toBeLessThanOrEqual(INSTRUCTIONS_TOKEN_BUDGET);
    expect(text).toContain('12 backend targets in 5 profiles');
    for (const name of [
      'mcp_search_tools',
      'mcp_inspect_schema',
      'mcp_call_tool',
    ])
      expect(text).toContain(`- ${name}:`);
    expect(text).toContain(
      '- appsec (reverse engineering and native debugging: decompilers, disassemblers, GDB and LLDB.): ghidra, mdb, radare2, rea',
    );
    for (const { target } of DEFAULT_BACKENDS)
      expect(text).toMatch(new RegExp(`[ ,]${target}(,|\\n|$)`));
    for (const profile of PROFILE_NAMES)
      expect(text).toContain(`- ${profile} (`);
    expect(text).toMatch(
      /Before saying that a tool .* does not exist, search for it with mcp_search_tools/,
    );
  });

  it('is the same bytes for the same table, whatever its order', () => {
    const text = buildInstructions({ backends: DEFAULT_BACKENDS });
    expect(buildInstructions({ backends: [...DEFAULT_BACKENDS] })).toBe(text);
    expect(
      buildInstructions({ backends: [...DEFAULT_BACKENDS].reverse() }),
    ).toBe(text);
    expect(buildInstructions({ backends: DEFAULT_BACKENDS.slice(1) })).not.toBe(
      text,
    );
  });

  it('lists profiles with target counts only for a large table, within the same budget', () => {
    const backends = Array.from({ length: 5_000 }, (_, index) => ({
      target: `target-${index}-${'x'.repeat(200)}`,
      profile: `${index % 30 === 0 ? 'core' : `team-${index % 30}`}-${'p'.repeat(60)}`,
    }));
    const text = buildInstructions({ backends });
    process.stderr.write(
      `instructions, 5,000 backends in 30 profiles: ${tokens(text)} o200k_base tokens\n`,
    );
    expect(tokens(text)).toBeLessThanOrEqual(INSTRUCTIONS_TOKEN_BUDGET);
    expect(text).toContain('5000 backend targets in 30 profiles');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2_048);
    expect(text).not.toContain('target-0-');
    expect(text).toContain('167 targets');
    expect(text.match(/^- .*: \d+ targets?$/gm)).toHaveLength(
      MAX_LISTED_PROFILES,
    );
    expect(text).toContain(
      `- and ${30 - MAX_LISTED_PROFILES} more profiles with`,
    );
  });

  it('stays within the budget at the largest table it still names target by target', () => {
    const backends = Array.from({ length: 40 }, (_, index) => ({
      target: `${index}`.padStart(8, '7'),
      profile: index < 30 ? PROFILE_NAMES[index % 5]! : `x${index}`,
    }));
    const text = buildInstructions({ backends });
    process.stderr.write(
      `instructions, 40 targets named: ${tokens(text)} o200k_base tokens\n`,
    );
    expect(text).toContain('Targets by profile:');
    expect(tokens(text)).toBeLessThanOrEqual(INSTRUCTIONS_TOKEN_BUDGET);
    // Claude Code cuts server instructions at 2 KB: all of it must reach the model.
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2_048);
  });

  it('lists profiles only once the target names grow past the limit', () => {
    const backends = Array.from({ length: 20 }, (_, index) => ({
      target: `t${index}-${'n'.repeat(24)}`,
      profile: 'research',
    }));
    const text = buildInstructions({ backends });
    expect(text).toContain(
      '- research (the web and the desktop: crawling pages, web search, driving a Linux desktop.): 20 targets',
    );
    expect(tokens(text)).toBeLessThanOrEqual(INSTRUCTIONS_TOKEN_BUDGET);
  });
});
