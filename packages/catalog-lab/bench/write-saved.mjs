// Writes a saved catalog stream (ToolCatalog.saveCatalogStream) to a file a piece at a time,
// its header beside it (`<file>.json`); `readSavedCatalog` reads both back.
import { readFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** Writes `stream`'s pieces to `file` and its header to `<file>.json`. */
export async function writeSavedCatalog(stream, file) {
  writeFileSync(`${file}.json`, JSON.stringify(stream.header));
  const handle = await open(file, 'w');
  try {
    for await (const piece of stream.chunks()) await handle.write(piece);
  } finally {
    await handle.close();
  }
}

/** The saved catalog `writeSavedCatalog` wrote to `file`, as `restoreCatalogAsync` takes it. */
export function readSavedCatalog(file) {
  return {
    header: JSON.parse(readFileSync(`${file}.json`, 'utf8')),
    bytes: readFileSync(file),
  };
}
