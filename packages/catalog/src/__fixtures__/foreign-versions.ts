// Test fixture: a saved catalog of another layout or catalog version is refused.
import { expect } from 'vitest';
import { VERSION } from '../version.js';

/**
 * Checks that `saved` with its layout number (the u32 at byte 8) raised, and with another
 * catalog version in its header (digest recomputed by `redigested`), is refused with
 * `SAVED_CATALOG_VERSION`, and that `describe` names the layout.
 */
export async function expectForeignVersionsRefused(options: {
  saved: Uint8Array;
  layout: number;
  refused: (bytes: Uint8Array) => Promise<string | undefined>;
  describe: (bytes: Uint8Array) => unknown;
  redigested: (bytes: Uint8Array) => Uint8Array;
}): Promise<void> {
  const { saved, layout, refused } = options;
  const raised = saved.slice();
  new DataView(raised.buffer).setUint32(8, layout + 1, true);
  expect(await refused(raised)).toBe('SAVED_CATALOG_VERSION');
  expect(() => options.describe(raised)).toThrow(
    new RegExp(`written in layout ${layout + 1}`),
  );
  const at = Buffer.from(saved).indexOf(`"catalogVersion":"${VERSION}"`);
  const foreign = saved.slice();
  foreign.set(new TextEncoder().encode('"catalogVersion":"9'), at);
  expect(await refused(options.redigested(foreign))).toBe(
    'SAVED_CATALOG_VERSION',
  );
}
