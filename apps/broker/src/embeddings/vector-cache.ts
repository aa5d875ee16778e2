import { errorText } from '../error-text.js';
import {
  isRecord,
  readStateFile,
  writeFileAtomic,
} from '../trust/state-file.js';

const VECTOR_CACHE_FORMAT = 'heretek-broker/embeddings';
const VECTOR_CACHE_VERSION = 1;

/**
 * Tool vectors on disk, one JSON file written atomically: `{ format, version, models: { <model>:
 * { <definition hash>: <base64 of little-endian float32> } } }`. Each model keeps the vectors
 * of the tools it last saw; a missing or malformed file counts as empty; `off` keeps nothing.
 */
export class VectorCache {
  readonly file: string;
  readonly #model: string;
  readonly #log: (line: string) => void;
  /** Other models' entries, kept as they were read. */
  #others: Record<string, unknown> = {};

  constructor(options: {
    file: string;
    model: string;
    log: (line: string) => void;
  }) {
    this.file = options.file;
    this.#model = options.model;
    this.#log = options.log;
  }

  /** Adds this model's stored vectors to `into` (by definition hash). */
  async load(into: Map<string, Float32Array>): Promise<void> {
    if (this.file === 'off') return;
    let text: string | undefined;
    try {
      text = await readStateFile(this.file);
    } catch (error) {
      this.#log(
        `embeddings cache ${this.file}: ${errorText(error)}; starting empty`,
      );
      return;
    }
    if (text === undefined) return;
    const problem = this.#read(text, into);
    if (problem !== undefined)
      this.#log(
        `embeddings cache ${this.file}: ${problem}; starting empty (it is rewritten)`,
      );
  }

  #read(text: string, into: Map<string, Float32Array>): string | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return 'not JSON';
    }
    if (
      !isRecord(parsed) ||
      parsed.format !== VECTOR_CACHE_FORMAT ||
      parsed.version !== VECTOR_CACHE_VERSION ||
      !isRecord(parsed.models)
    )
      return `not a ${VECTOR_CACHE_FORMAT} file of version ${VECTOR_CACHE_VERSION}`;
    const { [this.#model]: mine, ...others } = parsed.models;
    this.#others = others;
    if (mine === undefined) return undefined;
    if (!isRecord(mine)) return `model ${this.#model}: not an object`;
    const read = new Map<string, Float32Array>();
    for (const [hash, encoded] of Object.entries(mine)) {
      const bytes =
        typeof encoded === 'string' ? Buffer.from(encoded, 'base64') : null;
      if (bytes === null || bytes.length === 0 || bytes.length % 4 !== 0)
        return `model ${this.#model}: the vector of ${hash.slice(0, 12)} is not base64 float32`;
      const vector = new Float32Array(bytes.length / 4);
      for (let d = 0; d < vector.length; d += 1)
        vector[d] = bytes.readFloatLE(d * 4);
      if (!vector.every(Number.isFinite))
        return `model ${this.#model}: the vector of ${hash.slice(0, 12)} is not finite`;
      read.set(hash, vector);
    }
    for (const [hash, vector] of read) into.set(hash, vector);
    if (read.size > 0)
      this.#log(
        `embeddings cache ${this.file}: ${read.size} tool vectors of ${this.#model}`,
      );
    return undefined;
  }

  /** Writes this model's vectors of the `current` definition hashes (failures are logged, never thrown). */
  async save(
    vectors: ReadonlyMap<string, Float32Array>,
    current: ReadonlySet<string>,
  ): Promise<void> {
    if (this.file === 'off') return;
    const mine: Record<string, string> = {};
    for (const hash of current) {
      const vector = vectors.get(hash);
      if (vector === undefined) continue;
      const bytes = Buffer.alloc(vector.length * 4);
      vector.forEach((value, d) => bytes.writeFloatLE(value, d * 4));
      mine[hash] = bytes.toString('base64');
    }
    try {
      await writeFileAtomic(
        this.file,
        `${JSON.stringify({
          format: VECTOR_CACHE_FORMAT,
          version: VECTOR_CACHE_VERSION,
          models: { ...this.#others, [this.#model]: mine },
        })}\n`,
      );
    } catch (error) {
      this.#log(
        `embeddings cache ${this.file}: not written: ${errorText(error)}`,
      );
    }
  }
}
