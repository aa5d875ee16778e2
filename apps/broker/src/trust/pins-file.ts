import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import canonicalize from 'canonicalize';
import { z } from 'zod';
import { errorText } from '../error-text.js';
import { quote } from '../errors.js';
import { issueLines } from '../issue-text.js';
import {
  definitionHash,
  type NormalizedDefinition,
} from './definition-hash.js';
import { isMissing, stampOf, writeAll, writeFileAtomic } from './state-file.js';
import { TrustError } from './trust-error.js';

/** The pins file: a header line (`{"version":2}`, or with `"readOnly":true`, a reviewed lock that only `--pin` updates), then one line per pin sorted by name, each the canonical JSON (RFC 8785) of `{"hash":"sha256:…","name":"<target>_<tool>","tool":{"annotations":…,"description":…,"inputSchema":…}}`. A line starts with its hash and name, so a store reads those and parses a line only when it needs that pin. A file of another version is refused. */
export const PINS_FILE_VERSION = 2;

/** The backend a pin belongs to: its name up to the first `_` (`github_create_issue`: `github`); a target with a pin is known. */
export function pinTarget(name: string): string {
  const end = name.indexOf('_');
  return end === -1 ? name : name.slice(0, end);
}

/** What a pin keeps of its definition besides the name and hash. */
export type PinBody = Omit<NormalizedDefinition, 'name'>;

/** One pin as a store knows it: its hash, and its definition (a pin made in memory) or its line in the bytes read (parsed when needed). */
export type FilePin = {
  readonly hash: string;
  readonly body?: PinBody;
  readonly bytes?: Buffer;
  readonly start: number;
  readonly end: number;
  /** Set once the line was checked against its hash (a memo). */
  checked: boolean;
};

/** The pins file's first line. */
export function headerLine(readOnly: boolean): string {
  return `${canonicalize({ ...(readOnly ? { readOnly } : {}), version: PINS_FILE_VERSION })}\n`;
}

/** One pin's line, with its line break. */
export function pinLine(name: string, hash: string, body: PinBody): string {
  const { description, inputSchema, annotations } = body;
  return `${canonicalize({ hash, name, tool: { annotations, description, inputSchema } })}\n`;
}

export function invalidPinsFile(file: string, why: string): TrustError {
  return new TrustError({
    code: 'PINS_FILE_INVALID',
    message: `Pins file ${file}: ${why}. It was left untouched: fix or remove it (removing it re-pins every tool on first use), or point HERETEK_PINS_FILE elsewhere.`,
  });
}

function unreadable(file: string, error: unknown): TrustError {
  return new TrustError({
    code: 'PINS_FILE_INVALID',
    message: `Pins file ${file} cannot be read (${errorText(error)}). Fix its permissions or point HERETEK_PINS_FILE elsewhere.`,
    cause: error,
  });
}

/** Runs `use` with the pins file open for reading (`undefined` when there is none), then closes it; a file that cannot be opened is `PINS_FILE_INVALID`. */
export async function withPinsFile<T>(
  file: string,
  use: (handle: FileHandle | undefined) => Promise<T>,
): Promise<T> {
  const handle = await open(file, 'r').catch((error: unknown) => {
    if (isMissing(error)) return undefined;
    throw unreadable(file, error);
  });
  try {
    return await use(handle);
  } finally {
    await handle?.close();
  }
}

const headerSchema = z.strictObject(
  {
    version: z.literal(PINS_FILE_VERSION, { error: String(PINS_FILE_VERSION) }),
    readOnly: z.boolean({ error: 'true or false' }).optional(),
  },
  { error: 'a JSON object' },
);

/** The header's mark; throws for a first line that is not a header of this version. */
function headerOf(file: string, line: string): { readOnly: boolean } {
  const wrong = (why: string) =>
    invalidPinsFile(
      file,
      `its first line must be ${headerLine(false).trimEnd()} (or ${headerLine(true).trimEnd()}; a pins file of another layout is not read): ${why}`,
    );
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch (error) {
    throw wrong(`it is not JSON (${errorText(error)}): ${quote(line, 60)}`);
  }
  const parsed = headerSchema.safeParse(data);
  if (!parsed.success)
    throw wrong(
      issueLines({
        issues: parsed.error.issues.slice(0, 5),
        input: data,
        allowed: ['version', 'readOnly'],
        root: 'it',
      }).join('; '),
    );
  return { readOnly: parsed.data.readOnly === true };
}

/** Reads the pins file through `handle` and indexes it: each pin's name, hash and line (parsed and checked later). Throws `TrustError` `PINS_FILE_INVALID` for a file it cannot read as pins. */
export async function readPins(file: string, handle: FileHandle) {
  const read = async () =>
    [stampOf(await handle.stat()), await handle.readFile()] as const;
  const [stamp, bytes] = await read().catch((error: unknown) => {
    throw unreadable(file, error);
  });
  // What an index cache records. Hashed here: Node 20's subtle.digest holds this
  // thread five times as long (it copies the bytes first).
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  const headerEnd = bytes.indexOf(NEWLINE);
  const header = headerEnd === -1 ? bytes.length : headerEnd;
  const { readOnly } = headerOf(file, bytes.toString('utf8', 0, header));
  if (headerEnd === -1) throw invalidPinsFile(file, 'line 1 does not end');
  const pins = new Map<string, FilePin>();
  let previous: string | undefined;
  for (let start = headerEnd + 1, line = 2; start < bytes.length; line += 1) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end === -1) throw invalidPinsFile(file, `line ${line} does not end`);
    const head = headOf(bytes, start, end);
    if (head === undefined)
      throw invalidPinsFile(
        file,
        `line ${line} is not a pin as the broker writes it ({"hash":"sha256:<hex>","name":"<tool>","tool":{…}}, canonical JSON)`,
      );
    const { name, hash } = head;
    // Sorted, each name once: a name not after the one before is out of place.
    if (previous !== undefined && name <= previous)
      throw invalidPinsFile(
        file,
        name === previous
          ? `line ${line}: "${name}" is pinned twice`
          : `line ${line}: "${name}" comes after "${previous}" (the lines are sorted by name)`,
      );
    pins.set(name, { hash, bytes, start, end, checked: false });
    previous = name;
    start = end + 1;
  }
  return { stamp, digest, readOnly, pins };
}

/** Writes the pins file whole (atomically): the header, then the pins in name order, a pin read copied from the bytes read, a pin made here serialised, through one reused buffer of a quarter megabyte, so no object per line outlives its line; the stamp and SHA-256 of the file written. */
export async function writePins(
  file: string,
  readOnly: boolean,
  pins: ReadonlyMap<string, FilePin>,
) {
  const digest = createHash('sha256');
  const chunk = Buffer.allocUnsafe(1 << 18);
  const stats = await writeFileAtomic(file, async (handle) => {
    let used = 0;
    const send = async (piece: Uint8Array) => {
      digest.update(piece);
      await writeAll(handle, [piece]);
    };
    /** Appends a line, sending the buffer out first when it does not fit; a line longer than the buffer goes out alone. */
    const put = async (line: string | Buffer) => {
      const size =
        typeof line === 'string' ? Buffer.byteLength(line) : line.length;
      if (used + size > chunk.length && used > 0) {
        await send(chunk.subarray(0, used));
        used = 0;
      }
      if (size > chunk.length)
        return send(typeof line === 'string' ? Buffer.from(line) : line);
      used +=
        typeof line === 'string'
          ? chunk.write(line, used)
          : line.copy(chunk, used);
    };
    await put(headerLine(readOnly));
    for (const name of [...pins.keys()].sort()) {
      const { bytes, start, end, body, hash } = pins.get(name)!;
      await put(
        bytes ? bytes.subarray(start, end + 1) : pinLine(name, hash, body!),
      );
    }
    if (used > 0) await send(chunk.subarray(0, used));
  });
  return { stamp: stampOf(stats), digest: `sha256:${digest.digest('hex')}` };
}

const NEWLINE = 0x0a;
const HEAD =
  /^\{"hash":"sha256:([0-9a-f]{64})","name":"((?:[^"\\]|\\.)*)","tool":\{/;

/** The name and hash of the pin line from `start` to `end`, if it is laid out as one (its first 512 bytes read first: a cut character there is after the head, or the head does not match and the whole line is read). */
function headOf(bytes: Buffer, start: number, end: number) {
  const head = (to: number) => HEAD.exec(bytes.toString('utf8', start, to));
  const found = head(Math.min(end, start + 512)) ?? head(end);
  if (found === null) return undefined;
  const text = found[2]!;
  try {
    const name = text.includes('\\') ? JSON.parse(`"${text}"`) : text;
    return { name: name as string, hash: `sha256:${found[1]}` };
  } catch {
    return undefined;
  }
}

const pinLineSchema = z.object({
  hash: z.string(),
  name: z.string(),
  tool: z.object({
    description: z.string(),
    inputSchema: z.unknown(),
    annotations: z.record(z.string(), z.unknown()),
  }),
});

/** The definition of the pin `name`, parsed from its line and checked against its hash (once); why it cannot be trusted otherwise. */
export function readPinLine(name: string, pin: FilePin): PinBody | string {
  if (pin.body !== undefined) return pin.body;
  let data: unknown;
  try {
    data = JSON.parse(pin.bytes!.toString('utf8', pin.start, pin.end));
  } catch (error) {
    return `entry "${name}" is not JSON (${errorText(error)})`;
  }
  const parsed = pinLineSchema.safeParse(data);
  if (
    !parsed.success ||
    parsed.data.name !== name ||
    parsed.data.hash !== pin.hash
  )
    return `entry "${name}" is not a pin entry`;
  const { description, inputSchema, annotations } = parsed.data.tool;
  const body = { description, inputSchema, annotations };
  if (!pin.checked && definitionHash({ name, ...body }) !== pin.hash)
    return `entry "${name}": its hash does not match its definition (edited by hand?); restore the entry, or remove it and the tool is pinned again at its next listing`;
  pin.checked = true;
  return body;
}
