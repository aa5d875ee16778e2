import { Transform, type TransformCallback } from 'node:stream';
import { deserializeMessage } from '@modelcontextprotocol/server';

/** A request the SDK's reader would drop without a word, as {@link EnvelopeGuard} reports it. */
export type RejectedRequest = { id: string | number; problem: string };

/**
 * Sits before the SDK's stdio reader (one line a chunk): a request the SDK's
 * `deserializeMessage` rejects but that has a usable id is taken out and reported, so it is
 * answered with Invalid Request instead of dropped silently. Other lines pass unchanged.
 */
export class EnvelopeGuard extends Transform {
  constructor(private readonly onRejected: (request: RejectedRequest) => void) {
    super();
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: TransformCallback,
  ): void {
    const rejected = rejectedRequest(chunk.toString('utf8'));
    if (rejected === undefined) this.push(chunk);
    else this.onRejected(rejected);
    done();
  }
}

function rejectedRequest(line: string): RejectedRequest | undefined {
  if (line.trim() === '') return undefined;
  let problem: string;
  try {
    deserializeMessage(line);
    return undefined;
  } catch (error) {
    const issue = (
      error as { issues?: Array<{ path?: unknown[]; message?: string }> }
    ).issues?.[0];
    problem =
      issue === undefined
        ? 'not a JSON-RPC message'
        : `${(issue.path ?? []).join('.') || 'message'}: ${issue.message ?? 'invalid'}`;
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined; // not JSON: no id to answer
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return undefined;
  const m = value as Record<string, unknown>;
  const id = m.id;
  if (
    m.jsonrpc !== '2.0' ||
    typeof m.method !== 'string' ||
    'result' in m ||
    'error' in m ||
    !(typeof id === 'string' || Number.isSafeInteger(id))
  )
    return undefined;
  return { id: id as string | number, problem: problem.slice(0, 200) };
}
