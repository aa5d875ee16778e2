// Test fixture: a larger catalog made of copies of a set's tools.
import type { ToolEntry } from '../types.js';

/** The tools of `entries` under `copies` targets each (`copy<n>-<target>`). */
export function targetCopies(
  entries: readonly ToolEntry[],
  copies: number,
): ToolEntry[] {
  const tools: ToolEntry[] = [];
  for (let copy = 0; copy < copies; copy += 1)
    for (const entry of entries)
      tools.push({
        ...entry,
        target: `copy${copy}-${entry.target}`,
        name: `copy${copy}-${entry.name}`,
      });
  return tools;
}
