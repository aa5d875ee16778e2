import { Buffer } from 'node:buffer';
import { subtle } from 'node:crypto';
import { open } from 'node:fs/promises';
import canonicalize from 'canonicalize';
import { z } from 'zod';
import { errorText } from '../error-text.js';
import { issueLines } from '../issue-text.js';
import { definitionHash } from './definition-hash.js';
import { DIGEST_BYTES } from './tool-hashes.js';
import { TrustError } from './trust-error.js';

/**
 * The pins file, one JSON object per line, each line the canonical JSON
 * (RFC 8785: keys sorted, no whitespace) of its object:
 *
 * ```
 * {"version":2}                                   or {"readOnly":true,"version":2}
 * {"hash":"sha256:…","name":"adb_tap","tool":{"annotations":{},"description":"Tap.","inputSchema":{}}}
 * ```
 *
 * then one line per pinned tool, sorted by name. A string never holds a
 * line break in canonical JSON, and its keys are sorted, so every pin is one
 * line that starts with its hash and its name: a store reads each line's
 * name and hash where they stand and parses the rest of a line only when it
 * needs that pin. `readOnly: true` marks a reviewed (committed) lock: the
 * broker never pins into it on its own; only an explicit `--pin` updates it.
 *
 * A pin's name is its qualified tool name, `<target>_<tool>` (target names
 * hold no `_`), so the file also says which backends are **known**: a target
 * is known once the file pins one of its tools ({@link pinTarget}). Only a
 * backend that is not known yet is pinned whole at its first listing (trust
 * on first use); a tool that appears later on a known backend is held as new
 * until a person accepts it with `--pin`.
 */
export const PINS_FILE_VERSION = 2;

/**
 * The backend target a pin belongs to: its name up to the first `_` (the
 * whole name when it has none).
 *
 * @example
 * ```ts
 * pinTarget('github_create_issue'); // 'github'
 * ```
 */
export function pinTarget(name: string): string {
  const end = name.indexOf('_');
  return end === -1 ? name : name.slice(0, end);
}

/**
 * One pinned tool: the definition hash and the definition it was computed
 * from (so a change can be shown).
 */
export type PinEntry = {
  /** `definitionHash` of the pinned definition. */
  hash: string;
  description: string;
  inputSchema: unknown;
  annotations: Record<string, unknown>;
};

/** The pins file's content: its mark and its pins by qualified name. */
export type PinsFile = {
  version: typeof PINS_FILE_VERSION;
  readOnly?: boolean;
  tools: Record<string, PinEntry>;
};

/** The pins file's first line. */
export function headerLine(readOnly: boolean): string {
  return `${canonicalize({ ...(readOnly ? { readOnly } : {}), version: PINS_FILE_VERSION })}\n`;
}

/** One pin's line, with its line break. */
export function pinLine(name: string, entry: PinEntry): string {
  const { hash, description, inputSchema, annotations } = entry;
  return `${canonicalize({ hash, name, tool: { annotations, description, inputSchema } })}\n`;
}

/** The stamp of a file as read or written: inode, size and modification time. */
export function stampOf(stats: {
  mtimeMs: number;
  size: number;
  ino: number;
}): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

export function invalidPinsFile(file: string, why: string): TrustError {
  return new TrustError({
    code: 'PINS_FILE_INVALID',
    message: `Pins file ${file}: ${why}. It was left untouched: fix or remove it (removing it re-pins every tool on first use), or point HERETEK_PINS_FILE elsewhere.`,
  });
}

/**
 * Each pin's name, hash (32 bytes each in `digests`) and line (bytes
 * `starts[i]` to `ends[i]`, its line break left out), in file order.
 */
export type PinsIndex = {
  readOnly: boolean;
  names: string[];
  digests: Uint8Array;
  starts: Float64Array;
  ends: Float64Array;
};

/** The pins file as read: its bytes, stamp and digest, and its index (or, in the former layout, its pins). */
export type ReadPins = {
  bytes: Buffer;
  stamp: string;
  /** SHA-256 of `bytes` (`sha256:<hex>`): what an index cache records of the file. */
  digest: string;
} & ({ index: PinsIndex } | { formerLayout: PinsFile });

/**
 * Reads the pins file (its stamp taken from the handle it is read through)
 * and indexes it. Rejects as `open` does (a missing file is `ENOENT`), and
 * with `TrustError` `PINS_FILE_INVALID` for a file it cannot read as pins.
 */
export async function readPinsFile(file: string): Promise<ReadPins> {
  const handle = await open(file, 'r');
  let bytes: Buffer;
  let stamp: string;
  try {
    stamp = stampOf(await handle.stat());
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  // Hashed on the thread pool while this thread indexes the lines.
  const digest = subtle.digest('SHA-256', bytes);
  const headerEnd = bytes.indexOf(NEWLINE);
  const header = headerOf(bytes.toString('utf8', 0, Math.max(headerEnd, 0)));
  const read =
    header === undefined
      ? { formerLayout: readFormerLayout(bytes, file) }
      : { index: indexLines(bytes, headerEnd + 1, header, file) };
  const hash = Buffer.from(await digest).toString('hex');
  return { bytes, stamp, digest: `sha256:${hash}`, ...read };
}

/** The header line's mark, or `undefined` when the first line is not one (the former layout). */
function headerOf(line: string): { readOnly: boolean } | undefined {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = headerSchema.safeParse(data);
  return parsed.success
    ? { readOnly: parsed.data.readOnly === true }
    : undefined;
}

const headerSchema = z.strictObject({
  version: z.literal(PINS_FILE_VERSION),
  readOnly: z.boolean().optional(),
});

/** What each pin line starts with, up to its hash's hex digits. */
const LINE_HEAD = Buffer.from('{"hash":"sha256:');
/** What follows the hash, up to the name's string. */
const NAME_KEY = Buffer.from('","name":');
/** What follows the name's string (its closing quote first). */
const TOOL_KEY = Buffer.from('","tool":{');
const HEX_AT = LINE_HEAD.length;
const NAME_AT = HEX_AT + 64 + NAME_KEY.length;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Every pin line's name, hash and place, from `from` to the end; the lines
 * are sorted by name, each name once. What a line holds beyond its name and
 * hash is checked when its pin is (see `checkPinLine`).
 */
function indexLines(
  bytes: Buffer,
  from: number,
  header: { readOnly: boolean },
  file: string,
): PinsIndex {
  const names: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let digests = Buffer.alloc(1024 * DIGEST_BYTES);
  for (let start = from, line = 2; start < bytes.length; line += 1) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end === -1) throw invalidPinsFile(file, `line ${line} does not end`);
    const at = names.length * DIGEST_BYTES;
    if (at + DIGEST_BYTES > digests.length) {
      const grown = Buffer.alloc(digests.length * 2);
      grown.set(digests);
      digests = grown;
    }
    const name = nameOf(bytes, start, end);
    if (name === undefined || !readHex(bytes, start + HEX_AT, digests, at))
      throw invalidPinsFile(
        file,
        `line ${line} is not a pin as the broker writes it ({"hash":"sha256:<hex>","name":"<tool>","tool":{…}}, canonical JSON)`,
      );
    // Sorted, each name once: a name not after the one before is out of place.
    const previous = names[names.length - 1];
    if (previous !== undefined && name <= previous)
      throw invalidPinsFile(
        file,
        name === previous
          ? `line ${line}: "${name}" is pinned twice`
          : `line ${line}: "${name}" comes after "${previous}" (the lines are sorted by name)`,
      );
    names.push(name);
    starts.push(start);
    ends.push(end);
    start = end + 1;
  }
  return {
    readOnly: header.readOnly,
    names,
    digests: new Uint8Array(digests.subarray(0, names.length * DIGEST_BYTES)),
    starts: Float64Array.from(starts),
    ends: Float64Array.from(ends),
  };
}

/** Each byte's value as a lowercase hex digit, -1 for any other byte. */
const HEX_VALUES = Int8Array.from({ length: 256 }, (_, byte) =>
  byte >= 0x30 && byte <= 0x39
    ? byte - 0x30
    : byte >= 0x61 && byte <= 0x66
      ? byte - 0x57
      : -1,
);

/** Decodes the 64 lowercase hex digits at `from` into 32 bytes at `at` of `to`; false for other bytes. */
function readHex(
  bytes: Buffer,
  from: number,
  to: Uint8Array,
  at: number,
): boolean {
  for (let index = 0; index < DIGEST_BYTES; index += 1) {
    const high = HEX_VALUES[bytes[from + 2 * index]!]!;
    const low = HEX_VALUES[bytes[from + 2 * index + 1]!]!;
    if ((high | low) < 0) return false;
    to[at + index] = (high << 4) | low;
  }
  return true;
}

/** The hash text of the pin line `line` (where the hash stands; checked by the caller). */
export function hashOfLine(line: Buffer): string {
  return line.toString('latin1', HEX_AT - 'sha256:'.length, HEX_AT + 64);
}

/** Whether `bytes` holds `part` at `at`. */
function holds(bytes: Buffer, at: number, part: Buffer): boolean {
  for (let index = 0; index < part.length; index += 1)
    if (bytes[at + index] !== part[index]) return false;
  return true;
}

/**
 * The name of the pin line from `start` to `end`, if it is laid out as one.
 * A quote inside a JSON string follows a backslash, so the name's string
 * ends at the first quote that does not.
 */
export function nameOf(
  bytes: Buffer,
  start: number,
  end: number,
): string | undefined {
  const from = start + NAME_AT;
  if (
    !holds(bytes, start, LINE_HEAD) ||
    !holds(bytes, from - NAME_KEY.length, NAME_KEY) ||
    bytes[from] !== QUOTE
  )
    return undefined;
  let close = from + 1;
  let escaped = false;
  let escapes = false;
  for (; close < end; close += 1) {
    const byte = bytes[close];
    if (byte === QUOTE && !escaped) break;
    escaped = byte === BACKSLASH && !escaped;
    escapes ||= escaped;
  }
  if (close + TOOL_KEY.length > end || !holds(bytes, close, TOOL_KEY))
    return undefined;
  if (!escapes) return bytes.toString('utf8', from + 1, close);
  try {
    const name: unknown = JSON.parse(bytes.toString('utf8', from, close + 1));
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

const HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;
const HASH_TEXT = 'a string "sha256:<64 lowercase hex digits>"';

const pinPartsSchema = {
  hash: z
    .string({ error: HASH_TEXT })
    .regex(HASH_PATTERN, { error: HASH_TEXT }),
  description: z.string({ error: 'a string' }),
  inputSchema: z.unknown(),
  annotations: z.record(z.string(), z.unknown(), { error: 'an object' }),
};

/** `entry` as a pin of `name` when its hash is its definition's, else why not. */
function checkedEntry(name: string, entry: PinEntry): PinEntry | string {
  const { hash, description, inputSchema, annotations } = entry;
  const pin = { hash, description, inputSchema, annotations };
  return definitionHash({ name, ...pin }) === hash
    ? pin
    : `entry "${name}": its hash does not match its definition (edited by hand?); restore the entry, or remove it and the tool is pinned again at its next listing`;
}

const pinLineSchema = z.object({
  hash: pinPartsSchema.hash,
  name: z.string(),
  tool: z.object({
    description: pinPartsSchema.description,
    inputSchema: pinPartsSchema.inputSchema,
    annotations: pinPartsSchema.annotations,
  }),
});

/**
 * The pin of `name` on the line from `start` to `end`, checked against its
 * hash (`hash`, as indexed); why it cannot be trusted otherwise.
 */
export function checkPinLine(
  bytes: Buffer,
  place: { name: string; hash: string; start: number; end: number },
): PinEntry | string {
  const { name } = place;
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8', place.start, place.end));
  } catch (error) {
    return `entry "${name}" is not JSON (${errorText(error)})`;
  }
  const parsed = pinLineSchema.safeParse(data);
  if (
    !parsed.success ||
    parsed.data.name !== name ||
    parsed.data.hash !== place.hash
  )
    return `entry "${name}" is not a pin entry`;
  return checkedEntry(name, { hash: parsed.data.hash, ...parsed.data.tool });
}

const formerLayoutSchema = z.object(
  {
    version: z.literal(1, {
      error: `1 (the former layout, one JSON document) or the file's first line must be {"version":${PINS_FILE_VERSION}} (the current one)`,
    }),
    readOnly: z.boolean({ error: 'true or false' }).optional(),
    tools: z.record(
      z.string(),
      z.object(pinPartsSchema, {
        error:
          'an object with "hash", "description", "inputSchema" and "annotations"',
      }),
      { error: 'an object of pinned tools by qualified name' },
    ),
  },
  { error: 'a JSON object' },
);

/**
 * A pins file in the former layout (`{"version": 1, "readOnly"?, "tools":
 * {…}}`, one JSON document), parsed whole and each pin checked against its
 * hash: read once, and written again in the current layout.
 */
function readFormerLayout(bytes: Buffer, file: string): PinsFile {
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw invalidPinsFile(file, `not JSON (${errorText(error)})`);
  }
  const parsed = formerLayoutSchema.safeParse(data);
  if (!parsed.success)
    throw invalidPinsFile(
      file,
      issueLines({
        issues: parsed.error.issues.slice(0, 5),
        input: data,
        root: 'the file',
      }).join('; '),
    );
  const tools: Record<string, PinEntry> = {};
  for (const [name, entry] of Object.entries(parsed.data.tools)) {
    const pin = checkedEntry(name, entry);
    if (typeof pin === 'string') throw invalidPinsFile(file, pin);
    tools[name] = pin;
  }
  return {
    version: PINS_FILE_VERSION,
    ...(parsed.data.readOnly === true ? { readOnly: true } : {}),
    tools,
  };
}
