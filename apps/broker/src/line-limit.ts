import { Transform, type TransformCallback } from 'node:stream';

/** Bytes kept from each end of a dropped line, to find its JSON-RPC id. */
const EDGE_BYTES = 512;

/** A request line that was too long to read, as {@link LineLimit} reports it. */
export type DroppedLine = {
  /** Length of the line in bytes, without its newline (so far, when the input ended inside it). */
  bytes: number;
  /** The request's id, when its first or last bytes show one at the top level. */
  id: string | number | undefined;
};

const ID = String.raw`(-?\d{1,16}|"(?:[^"\\]|\\.){0,200}")`;
/** `{"id": ...` or `{"jsonrpc":"2.0","id": ...` at the start of the line. */
const ID_AT_START = new RegExp(
  String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}\s*[,}]`,
);
/** `..., "id": ...}` closing the line (the SDK client writes the id last). */
const ID_AT_END = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${ID}\s*\}\s*$`);

function idOf(head: Buffer, tail: Buffer): string | number | undefined {
  const match =
    ID_AT_START.exec(head.toString('utf8')) ??
    ID_AT_END.exec(tail.toString('utf8'));
  if (match === null) return undefined;
  try {
    return JSON.parse(match[1]!) as string | number;
  } catch {
    return undefined;
  }
}

/**
 * Passes newline-delimited input through line by line, and drops (without
 * buffering) any line longer than `maxLineBytes`: the MCP SDK's stdio
 * transport closes itself on such a line, leaving the broker serving nobody.
 * A dropped line is reported with its id when it shows one, to be answered.
 */
export class LineLimit extends Transform {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #dropping = false;
  #droppedBytes = 0;
  #head: Buffer = Buffer.alloc(0);
  #tail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly maxLineBytes: number,
    private readonly onDropped: (line: DroppedLine) => void,
  ) {
    super();
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: TransformCallback,
  ): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      // The common case, a whole short line with nothing pending: pass it on uncopied.
      if (
        newline !== -1 &&
        !this.#dropping &&
        this.#pendingBytes === 0 &&
        this.#pending.length === 0 &&
        newline - start <= this.maxLineBytes
      ) {
        this.push(chunk.subarray(start, newline + 1));
        start = newline + 1;
        continue;
      }
      const end = newline === -1 ? chunk.length : newline;
      const piece = chunk.subarray(start, end);
      if (this.#dropping) {
        this.#droppedBytes += piece.length;
        this.#tail = lastBytes(this.#tail, piece);
      } else if (this.#pendingBytes + piece.length > this.maxLineBytes) {
        const line = Buffer.concat([...this.#pending, piece]);
        this.#head = line.subarray(0, EDGE_BYTES);
        this.#tail = line.subarray(Math.max(0, line.length - EDGE_BYTES));
        this.#droppedBytes = line.length;
        this.#pending = [];
        this.#pendingBytes = 0;
        this.#dropping = true;
      } else {
        this.#pending.push(piece);
        this.#pendingBytes += piece.length;
      }
      if (newline === -1) break;
      this.#endLine();
      start = newline + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.#dropping) this.#report();
    else if (this.#pendingBytes > 0) this.push(Buffer.concat(this.#pending));
    done();
  }

  #endLine(): void {
    if (this.#dropping) {
      this.#report();
      this.#dropping = false;
      return;
    }
    this.#pending.push(Buffer.from('\n'));
    this.push(Buffer.concat(this.#pending));
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  #report(): void {
    const line = {
      bytes: this.#droppedBytes,
      id: idOf(this.#head, this.#tail),
    };
    this.#head = Buffer.alloc(0);
    this.#tail = Buffer.alloc(0);
    this.#droppedBytes = 0;
    this.onDropped(line);
  }
}

function lastBytes(previous: Buffer, next: Buffer): Buffer {
  if (next.length >= EDGE_BYTES) return next.subarray(next.length - EDGE_BYTES);
  const joined = Buffer.concat([previous, next]);
  return joined.subarray(Math.max(0, joined.length - EDGE_BYTES));
}
