// Test fixture: searches made between the slices of an asynchronous change.
import type { ToolCatalog } from '../catalog.js';

/**
 * Searches `catalog` for `query` at every turn of the event loop while `work` runs; resolves
 * with what `work` resolved to and every answer given meanwhile.
 */
export async function searchesDuring<T>(
  catalog: ToolCatalog,
  query: { query: string; limit: number },
  work: () => Promise<T>,
): Promise<{ result: T; answers: unknown[] }> {
  const answers: unknown[] = [];
  let running = true;
  const search = (): void => {
    if (!running) return;
    answers.push(catalog.search(query));
    setImmediate(search);
  };
  setImmediate(search);
  try {
    return { result: await work(), answers };
  } finally {
    running = false;
  }
}
