// Writes a saved catalog stream (ToolCatalog.saveCatalogStream) to a file a piece at a time.
import { open } from 'node:fs/promises';

/** Writes `stream`'s pieces to `file`, then its digest where it goes. */
export async function writeSavedCatalog(stream, file) {
  const handle = await open(file, 'w');
  try {
    const chunks = stream.chunks();
    let step = await chunks.next();
    for (; step.done !== true; step = await chunks.next())
      await handle.write(step.value);
    await handle.write(step.value, 0, step.value.length, stream.digestAt);
  } finally {
    await handle.close();
  }
}
