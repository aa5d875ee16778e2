import { parentPort, workerData } from 'node:worker_threads';
import { readPinsSync, type ReadPins } from './pins-index.js';

/**
 * Reads and indexes a pins file in a worker thread, beside the broker's
 * start-up: posts `{ ok: true, buffer, stamp, digest, index }` (the file's bytes and
 * the index's arrays transferred, not copied) or `{ ok: false, code,
 * message }` when the file cannot be read.
 */
const { file } = workerData as { file: string };
const port = parentPort!;
new Promise<ReadPins>((resolve) => resolve(readPinsSync(file))).then(
  ({ bytes, stamp, digest, index }) => {
    const whole =
      bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    // readFile's buffer is its own ArrayBuffer (never shared).
    const source = bytes.buffer as ArrayBuffer;
    const buffer = whole
      ? source
      : source.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
    port.postMessage({ ok: true, buffer, stamp, digest, index }, [
      buffer,
      ...(index === undefined
        ? []
        : [
            index.digests.buffer as ArrayBuffer,
            index.starts.buffer as ArrayBuffer,
            index.ends.buffer as ArrayBuffer,
          ]),
    ]);
  },
  (error: unknown) => {
    const { code, message } = error as { code?: unknown; message?: unknown };
    port.postMessage({
      ok: false,
      code: typeof code === 'string' ? code : undefined,
      message: String(message ?? error),
    });
  },
);
