import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { readPinsEarly, WORKER_MIN_BYTES } from './pins-index.js';
import { heretekStateDir } from './state-dir.js';

/**
 * The worker script that reads and indexes a pins file, when the bundle
 * holds it (`dist/trust/pins-index-worker.js`; run from the sources there is
 * none, and the file is read in this thread).
 */
export function pinsIndexWorker(): URL | undefined {
  const url = new URL('./trust/pins-index-worker.js', import.meta.url);
  return existsSync(url) ? url : undefined;
}

/**
 * Starts reading and indexing the pins file a broker served with `env`
 * will open, when it is large, before the rest of the broker loads: the
 * trust layer takes the read when it opens that file. Only a head start:
 * the configuration, read later, decides (another file, or none, leaves the
 * read unused).
 */
export function prefetchPins(env: NodeJS.ProcessEnv): void {
  if (env.HERETEK_PIN_POLICY === 'off') return;
  const worker = pinsIndexWorker();
  if (worker === undefined) return;
  const file = path.resolve(
    env.HERETEK_PINS_FILE ?? path.join(heretekStateDir({ env }), 'pins.json'),
  );
  try {
    if (statSync(file).size < WORKER_MIN_BYTES) return;
  } catch {
    return;
  }
  readPinsEarly(file, worker);
}
