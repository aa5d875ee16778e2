import { ROLE_NAMES, isReadOnlyRole } from '@heretek/prefix';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  HANDOFF_LIMITS,
  HandoffValidationError,
  ReadOnlyRecipientError,
  handoffDigest,
  parseHandoff,
  serializeHandoff,
  sha256Digest,
  type HandoffEnvelope,
} from './index.js';

const role = fc.constantFrom(...ROLE_NAMES);
const anyText = (maxLength: number) => fc.string({ unit: 'binary', maxLength });
const nonEmptyLine = (maxLength: number) =>
  fc
    .string({ unit: 'binary', minLength: 1, maxLength })
    .filter((value) => !/[\r\n\u2028\u2029]/.test(value));
const hex = (length: number) =>
  fc.stringMatching(new RegExp(`^[0-9a-f]{${length}}$`));
const digest = fc.oneof(
  hex(64).map((h) => `sha256:${h}`),
  hex(128).map((h) => `sha512:${h}`),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => sha256Digest(bytes)),
);
const timestamp = fc
  .date({
    min: new Date('1970-01-01T00:00:00Z'),
    max: new Date('2199-12-31T23:59:59Z'),
    noInvalidDate: true,
  })
  .map((date) => date.toISOString());
const segment = fc
  .stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._ -]{0,11}$/)
  .filter((s) => s !== '.' && s !== '..');
const uri = fc.oneof(
  fc
    .array(segment, { minLength: 1, maxLength: 4 })
    .map((parts) => parts.join('/')),
  fc.webUrl({ withQueryParameters: true }),
);
const artifact = fc.record(
  {
    name: nonEmptyLine(40),
    uri,
    digest,
    mediaType: fc.constantFrom(
      'text/plain',
      'application/json',
      'image/png',
      'application/vnd.heretek.handoff.v1+json',
    ),
    sizeBytes: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
    description: fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
  },
  { requiredKeys: ['name', 'uri', 'digest'] },
);
const constraints = fc.record(
  {
    rules: fc.array(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
      { maxLength: 4 },
    ),
    allowedTargets: fc.uniqueArray(
      fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,15}$/),
      { maxLength: 5 },
    ),
    maxToolCalls: fc.integer({ min: 1, max: 1_000_000 }),
    deadline: timestamp,
  },
  { requiredKeys: ['rules'] },
);

/** A fully spelled-out, valid envelope (every default explicit). */
const envelope: fc.Arbitrary<HandoffEnvelope> = fc
  .record({
    traceId: hex(32).filter((id) => !/^0+$/.test(id)),
    createdAt: timestamp,
    from: role,
    to: role,
    mutating: fc.boolean(),
    task: fc.record({
      title: nonEmptyLine(HANDOFF_LIMITS.titleLength),
      details: anyText(200),
      acceptanceCriteria: fc.array(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
        { maxLength: 4 },
      ),
    }),
    contextSummary: anyText(300),
    artifacts: fc.uniqueArray(artifact, {
      selector: (a) => a.uri,
      maxLength: 4,
    }),
    constraints,
    parentDigest: fc.option(digest, { nil: undefined }),
  })
  .map(({ mutating, parentDigest, ...rest }) => ({
    version: 1 as const,
    ...rest,
    // Mutating work only goes to roles that may take it.
    intent:
      mutating && !isReadOnlyRole(rest.to)
        ? ('mutating' as const)
        : ('read-only' as const),
    ...(parentDigest === undefined ? {} : { parentDigest }),
  }));

/** Deterministic deep key shuffle driven by a seed. */
function shuffleKeys(value: unknown, seed: number): unknown {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const entries = Object.entries(node);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
    return Object.fromEntries(
      entries.map(([key, child]) => [key, walk(child)]),
    );
  };
  return walk(value);
}

/** Independent oracle: JSON with keys sorted by UTF-16 code units (what RFC 8785 does for our value types). */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
}

describe('handoff envelope properties', () => {
  it('round-trips: parse(serialize(e)) equals e, and serialization is a fixed point', () => {
    fc.assert(
      fc.property(envelope, (value) => {
        expect(parseHandoff(value)).toEqual(value);
        const text = serializeHandoff(value);
        const back = parseHandoff(text);
        expect(back).toEqual(value);
        expect(serializeHandoff(back)).toBe(text);
      }),
    );
  });

  it('serializes to JSON with sorted keys and no whitespace (RFC 8785 for strings and integers)', () => {
    fc.assert(
      fc.property(envelope, (value) => {
        expect(serializeHandoff(value)).toBe(sortedJson(value));
      }),
    );
  });

  it('has a digest that ignores key order and whitespace', () => {
    fc.assert(
      fc.property(
        envelope,
        fc.integer(),
        fc.integer({ min: 0, max: 4 }),
        (value, seed, indent) => {
          const shuffled = shuffleKeys(value, seed);
          const text = JSON.stringify(shuffled, null, indent);
          expect(handoffDigest(parseHandoff(text))).toBe(handoffDigest(value));
          expect(handoffDigest(shuffled as HandoffEnvelope)).toBe(
            handoffDigest(value),
          );
        },
      ),
    );
  });

  it('has a digest that changes when a value changes', () => {
    fc.assert(
      fc.property(envelope, anyText(300), (value, summary) => {
        fc.pre(summary !== value.contextSummary);
        expect(handoffDigest({ ...value, contextSummary: summary })).not.toBe(
          handoffDigest(value),
        );
      }),
    );
  });

  it('refuses mutating work for every read-only recipient', () => {
    const readOnlyRole = fc.constantFrom(
      ...ROLE_NAMES.filter((name) => isReadOnlyRole(name)),
    );
    fc.assert(
      fc.property(envelope, readOnlyRole, (value, to) => {
        expect(() =>
          parseHandoff({ ...value, to, intent: 'mutating' }),
        ).toThrow(ReadOnlyRecipientError);
        expect(parseHandoff({ ...value, to, intent: 'read-only' }).to).toBe(to);
      }),
    );
  });

  it('refuses any unknown top-level key, naming it', () => {
    const known = new Set([
      'version',
      'traceId',
      'createdAt',
      'from',
      'to',
      'intent',
      'task',
      'contextSummary',
      'artifacts',
      'constraints',
      'parentDigest',
    ]);
    fc.assert(
      fc.property(
        envelope,
        fc
          .string({ minLength: 1, maxLength: 12 })
          .filter((key) => !known.has(key) && key !== '__proto__'),
        fc.jsonValue(),
        (value, key, extra) => {
          try {
            parseHandoff({ ...value, [key]: extra });
            expect.unreachable('unknown key accepted');
          } catch (error) {
            expect(HandoffValidationError.isInstance(error)).toBe(true);
            const issues = (error as HandoffValidationError).issues;
            expect(issues).toHaveLength(1);
            expect(issues[0]).toMatchObject({
              code: 'unknown_key',
              pathSegments: [key],
            });
          }
        },
      ),
    );
  });
});
