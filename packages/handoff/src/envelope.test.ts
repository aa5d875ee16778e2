import { createHash } from 'node:crypto';
import { ROLE_NAMES, isReadOnlyRole } from '@heretek/prefix';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  HANDOFF_LIMITS,
  HandoffDigestMismatchError,
  HandoffError,
  HandoffValidationError,
  ReadOnlyRecipientError,
  canReceiveHandoff,
  createHandoff,
  handoffDigest,
  parseHandoff,
  serializeHandoff,
  sha256Digest,
  verifyHandoffDigest,
  handoffEnvelopeSchema,
  type HandoffEnvelope,
  type HandoffEnvelopeInput,
  type CreateHandoffOptions,
  type HandoffIssue,
} from './index.js';
import { isArtifactUri } from './envelope-schema.js';
import { thrown } from './__fixtures__/thrown.js';

/** The functions are typed for envelopes; the tests feed them raw values on purpose. */
const digestOf = (value: unknown): string =>
  handoffDigest(value as HandoffEnvelope);
const serializeOf = (value: unknown): string =>
  serializeHandoff(value as HandoffEnvelope);

const DIGEST_A = `sha256:${'a'.repeat(64)}`;

/** `createHandoff` with the fewest options, director to qa-adversary, read-only. */
const created = (
  overrides: Partial<CreateHandoffOptions> = {},
): HandoffEnvelope =>
  createHandoff({
    from: 'director',
    to: 'qa-adversary',
    intent: 'read-only',
    task: { title: 't' },
    contextSummary: '',
    ...overrides,
  });

function sample(
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    version: 1,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    createdAt: '2026-01-31T12:00:00.000Z',
    from: 'director',
    to: 'staff-backend',
    intent: 'mutating',
    task: {
      title: 'Add rate limiting to POST /login',
      details: 'Five attempts per minute per IP; 429 with Retry-After.',
      acceptanceCriteria: ['a sixth attempt within a minute gets 429'],
    },
    contextSummary: 'QA saw brute force in the logs.',
    artifacts: [
      {
        name: 'QA report',
        uri: 'reports/qa/login.md',
        digest: DIGEST_A,
        mediaType: 'text/markdown',
        sizeBytes: 1234,
      },
    ],
    constraints: {
      rules: ['do not change the public API'],
      allowedTargets: ['core'],
      maxToolCalls: 40,
    },
    ...overrides,
  };
}

/**
 * Runs `fn`, expects it to throw INVALID_ENVELOPE with exactly one issue
 * matching `issue`, and returns the error.
 */
function expectOneIssue(
  fn: () => unknown,
  issue: Partial<HandoffIssue>,
): HandoffValidationError {
  const error = thrown(fn) as HandoffValidationError;
  expect(error.code).toBe('INVALID_ENVELOPE');
  expect(error.issues).toEqual([expect.objectContaining(issue)]);
  return error;
}

describe('parseHandoff', () => {
  it('accepts a full envelope and returns it unchanged', () => {
    const input = sample();
    expect(parseHandoff(input)).toEqual(input);
    expect(parseHandoff(JSON.stringify(input))).toEqual(input);
  });

  it('fills in defaults so omitted and empty fields mean the same envelope', () => {
    const minimal = sample({ task: { title: 't' } });
    delete minimal.artifacts;
    delete minimal.constraints;
    const parsed = parseHandoff(minimal);
    expect(parsed.task).toEqual({
      title: 't',
      details: '',
      acceptanceCriteria: [],
    });
    expect(parsed.artifacts).toEqual([]);
    expect(parsed.constraints).toEqual({ rules: [] });
    const explicit = sample({
      task: { title: 't', details: '', acceptanceCriteria: [] },
      artifacts: [],
      constraints: { rules: [] },
    });
    expect(digestOf(minimal)).toBe(digestOf(explicit));
  });

  it('refuses unknown keys at every depth, naming each path', () => {
    const input = sample({ extra: 1 });
    (input.task as Record<string, unknown>).priority = 'high';
    (input.artifacts as Record<string, unknown>[])[0]!.owner = 'me';
    (input.constraints as Record<string, unknown>).mutating = true;
    const error = thrown(() => parseHandoff(input));
    expect(HandoffValidationError.isInstance(error)).toBe(true);
    const { code, issues, message } = error as HandoffValidationError;
    expect(code).toBe('INVALID_ENVELOPE');
    expect(issues.map((issue) => [issue.path, issue.code])).toEqual([
      ['artifacts[0].owner', 'unknown_key'],
      ['constraints.mutating', 'unknown_key'],
      ['extra', 'unknown_key'],
      ['task.priority', 'unknown_key'],
    ]);
    expect(message).toContain('task.priority: unknown key "priority"');
    expect(message).toContain('remove it');
  });

  it.each(['admin', 'Director', 'staff_backend', '', 'toString', '__proto__'])(
    'refuses the unknown role %j with a clear error',
    (role) => {
      const error = expectOneIssue(() => parseHandoff(sample({ to: role })), {
        path: 'to',
        code: 'unknown_role',
      });
      expect(error.message).toContain(
        `to: Unknown role ${JSON.stringify(role)}: expected one of director`,
      );
    },
  );

  it('names the path of every invalid value', () => {
    const error = thrown(() =>
      parseHandoff(
        sample({
          traceId: 'abc',
          createdAt: '2026-01-31 12:00',
          intent: 'write',
          task: { title: 'two\nlines' },
          artifacts: [{ name: 'x', uri: '../etc/passwd', digest: 'md5:abc' }],
          constraints: {
            rules: [],
            allowedTargets: ['ghidra_mcp'],
            maxToolCalls: 0,
          },
        }),
      ),
    ) as HandoffValidationError;
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'artifacts[0].digest',
      'artifacts[0].uri',
      'constraints.allowedTargets[0]',
      'constraints.maxToolCalls',
      'createdAt',
      'intent',
      'task.title',
      'traceId',
    ]);
    for (const issue of error.issues)
      expect(error.message).toContain(`${issue.path}: `);
  });

  it('checks allowed targets with the gateway target-name rule', () => {
    const targets = (allowedTargets: string[]) =>
      parseHandoff(sample({ constraints: { rules: [], allowedTargets } }))
        .constraints.allowedTargets;
    // agentgateway accepts these: 253 characters, a leading dot or hyphen.
    const long = 'a'.repeat(253);
    expect(targets(['crawl4ai.v2-x', long, '-x'])).toEqual([
      'crawl4ai.v2-x',
      long,
      '-x',
    ]);
    for (const [target, reason] of [
      ['Ghidra', /characters other than a-z/],
      ['ghidra_mcp', /'_' is reserved/],
      ['a+b', /'\+' is reserved/],
      ['', /it is empty/],
      ['a'.repeat(254), /254 characters long/],
    ] as const) {
      const error = thrown(() => targets([target])) as HandoffValidationError;
      expect(HandoffValidationError.isInstance(error)).toBe(true);
      expect(error.issues).toEqual([
        expect.objectContaining({
          path: 'constraints.allowedTargets[0]',
          message: expect.stringMatching(reason),
        }),
      ]);
      expect(error.issues[0]?.message).toContain('lowercase letters, digits');
    }
  });

  it('names missing required fields', () => {
    const error = thrown(() =>
      parseHandoff({ version: 1 }),
    ) as HandoffValidationError;
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'contextSummary',
      'createdAt',
      'from',
      'intent',
      'task',
      'to',
      'traceId',
    ]);
    expect(error.message).toContain(
      'contextSummary: contextSummary is required.',
    );
    expect(error.message).toContain('task: task is required.');
    expect(error.message).toContain(
      'from: from is required: set it to one of director',
    );
    expect(error.message).not.toContain('Unknown role undefined');
  });

  it('says which value is not an object, instead of a generic type error', () => {
    const cases: [unknown, string, string][] = [
      [[], '(root)', 'the handoff envelope must be an object, not an array.'],
      [null, '(root)', 'the handoff envelope must be an object, not null.'],
      [
        '"text"',
        '(root)',
        'the handoff envelope must be an object, not a string.',
      ],
      [
        sample({ task: 'do it' }),
        'task',
        'task must be an object, not a string.',
      ],
      [
        sample({ constraints: null }),
        'constraints',
        'constraints must be an object, not null.',
      ],
      [
        sample({ artifacts: ['a.txt'] }),
        'artifacts[0]',
        'artifact must be an object, not a string.',
      ],
      [
        sample({ version: undefined }),
        'version',
        'version is required: set it to the number 1.',
      ],
    ];
    for (const [input, path, message] of cases) {
      const error = expectOneIssue(() => parseHandoff(input), {
        path,
        message,
      });
      expect(error.message).not.toContain('Invalid input');
    }
  });

  it('refuses a non-object, invalid JSON and other versions with their own codes', () => {
    expect((thrown(() => parseHandoff('{not json')) as HandoffError).code).toBe(
      'INVALID_JSON',
    );
    expect((thrown(() => parseHandoff([])) as HandoffError).code).toBe(
      'INVALID_ENVELOPE',
    );
    expect((thrown(() => parseHandoff(null)) as HandoffError).code).toBe(
      'INVALID_ENVELOPE',
    );
    const future = thrown(() =>
      parseHandoff(sample({ version: 2 })),
    ) as HandoffValidationError;
    expect(future.code).toBe('UNSUPPORTED_VERSION');
    expect(future.issues[0]?.path).toBe('version');
    expect(future.message).toMatch(
      /version 2 is not supported; this package reads version 1/,
    );
    expectOneIssue(() => parseHandoff(sample({ version: '1' })), {
      path: 'version',
      message: 'version must be the number 1, not "1".',
    });
  });

  it('refuses __proto__ and constructor keys from JSON text as unknown keys', () => {
    const text = JSON.stringify(sample()).replace(
      '{',
      '{"__proto__":{"polluted":true},"constructor":1,',
    );
    const error = thrown(() => parseHandoff(text)) as HandoffValidationError;
    expect(error.issues.map((issue) => [issue.path, issue.code])).toEqual([
      ['__proto__', 'unknown_key'],
      ['constructor', 'unknown_key'],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses oversized JSON text before parsing it', () => {
    const text = ' '.repeat(HANDOFF_LIMITS.jsonTextLength + 1);
    const error = thrown(() => parseHandoff(text)) as HandoffValidationError;
    expect(error.code).toBe('INVALID_ENVELOPE');
    expect(error.message).toMatch(/Reference large content as artifacts/);
  });

  it('refuses lone surrogates, which UTF-8 cannot carry', () => {
    const error = thrown(() =>
      parseHandoff(sample({ contextSummary: 'bad \uD800 text' })),
    ) as HandoffValidationError;
    expect(error.issues).toEqual([
      expect.objectContaining({
        path: 'contextSummary',
        message: expect.stringMatching(/lone UTF-16 surrogate/),
      }),
    ]);
    // A proper surrogate pair is fine.
    expect(
      parseHandoff(sample({ contextSummary: 'ok \uD83D\uDE00' }))
        .contextSummary,
    ).toBe('ok 😀');
  });

  it('refuses the same artifact twice', () => {
    const artifact = { name: 'a', uri: 'a.txt', digest: DIGEST_A };
    const error = thrown(() =>
      parseHandoff(
        sample({ artifacts: [artifact, { ...artifact, name: 'b' }] }),
      ),
    ) as HandoffValidationError;
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'artifacts[1].uri',
    ]);
  });
});

describe('artifact uris', () => {
  it.each([
    'src/index.ts',
    'reports/qa login.md',
    'https://ci.example.com/runs/1/log.txt',
    'file:///tmp/x.bin',
    'git+ssh://git@example.com/repo.git',
  ])('accepts %j', (uri) => expect(isArtifactUri(uri)).toBe(true));

  it.each([
    '/etc/passwd',
    '../secret',
    'a/../../b',
    './a',
    'a//b',
    'C:\\x',
    'a\\b',
    'C:/x',
    'd:',
    'a\nb',
    '',
  ])('refuses %j', (uri) => expect(isArtifactUri(uri)).toBe(false));
});

describe('read-only recipients', () => {
  const readOnly = ROLE_NAMES.filter((role) => isReadOnlyRole(role));

  it('knows which roles are read-only (director, qa-adversary)', () => {
    expect(readOnly).toEqual(['director', 'qa-adversary']);
  });

  it.each(readOnly)('refuses mutating work for %s from every role', (to) => {
    for (const from of ROLE_NAMES) {
      const error = thrown(() =>
        parseHandoff(sample({ from, to, intent: 'mutating' })),
      );
      expect(ReadOnlyRecipientError.isInstance(error)).toBe(true);
      expect(HandoffError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        code: 'READ_ONLY_RECIPIENT',
        from,
        to,
        isRetryable: false,
      });
      expect((error as Error).message).toContain(`"${to}" is a read-only role`);
      expect(() => created({ from, to, intent: 'mutating' })).toThrow(
        ReadOnlyRecipientError,
      );
    }
  });

  it('lets read-only roles receive read-only work and writers receive both', () => {
    for (const to of ROLE_NAMES) {
      expect(parseHandoff(sample({ to, intent: 'read-only' })).to).toBe(to);
      expect(canReceiveHandoff({ to, intent: 'read-only' })).toBe(true);
      expect(canReceiveHandoff({ to, intent: 'mutating' })).toBe(
        !readOnly.includes(to),
      );
    }
  });

  it('lets a read-only role hand mutating work to a writer', () => {
    expect(
      parseHandoff(sample({ from: 'qa-adversary', to: 'staff-mobile' })).intent,
    ).toBe('mutating');
  });

  it('throws for unknown roles in canReceiveHandoff too', () => {
    expect(() =>
      canReceiveHandoff({ to: 'admin', intent: 'read-only' }),
    ).toThrow(/Unknown role "admin"/);
  });
});

describe('createHandoff', () => {
  it('fills version, a W3C trace id and the creation time', () => {
    const before = Date.now();
    const envelope = created();
    expect(envelope.version).toBe(1);
    expect(envelope.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(Date.parse(envelope.createdAt)).toBeGreaterThanOrEqual(
      before - 1000,
    );
    expect(envelope.createdAt.endsWith('Z')).toBe(true);
  });

  it('keeps a given trace id and time (Date or string)', () => {
    const base = {
      from: 'staff-backend',
      to: 'qa-adversary',
      intent: 'read-only',
      task: { title: 'Verify the fix' },
      contextSummary: 'ready',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    } as const;
    const fromDate = createHandoff({
      ...base,
      createdAt: new Date(Date.UTC(2026, 0, 31, 12)),
    });
    const fromText = createHandoff({
      ...base,
      createdAt: '2026-01-31T12:00:00.000Z',
    });
    expect(fromDate).toEqual(fromText);
    expect(digestOf(fromDate)).toBe(digestOf(fromText));
  });

  it('refuses an invalid Date and a non-object with typed errors naming the path', () => {
    expectOneIssue(() => created({ createdAt: new Date('not a date') }), {
      path: 'createdAt',
    });
    expectOneIssue(
      () => createHandoff(null as unknown as CreateHandoffOptions),
      {
        path: '(root)',
        message: 'the handoff envelope must be an object, not null.',
      },
    );
  });

  it('gives distinct trace ids', () => {
    const ids = new Set(Array.from({ length: 50 }, () => created().traceId));
    expect(ids.size).toBe(50);
  });
});

describe('serializeHandoff and handoffDigest', () => {
  it('writes RFC 8785 canonical JSON: sorted keys, no whitespace', () => {
    const text = serializeOf(sample());
    expect(text).toBe(
      '{"artifacts":[{"digest":"' +
        DIGEST_A +
        '","mediaType":"text/markdown","name":"QA report","sizeBytes":1234,"uri":"reports/qa/login.md"}],' +
        '"constraints":{"allowedTargets":["core"],"maxToolCalls":40,"rules":["do not change the public API"]},' +
        '"contextSummary":"QA saw brute force in the logs.","createdAt":"2026-01-31T12:00:00.000Z",' +
        '"from":"director","intent":"mutating",' +
        '"task":{"acceptanceCriteria":["a sixth attempt within a minute gets 429"],' +
        '"details":"Five attempts per minute per IP; 429 with Retry-After.","title":"Add rate limiting to POST /login"},' +
        '"to":"staff-backend","traceId":"4bf92f3577b34da6a3ce929d0e0e4736","version":1}',
    );
  });

  it('digests the UTF-8 bytes of the canonical text as sha256:<hex>', () => {
    const envelope = sample({ contextSummary: 'naïve café — 😀' });
    const expected = createHash('sha256')
      .update(Buffer.from(serializeOf(envelope), 'utf8'))
      .digest('hex');
    expect(digestOf(envelope)).toBe(`sha256:${expected}`);
    expect(sha256Digest('abc')).toBe(
      'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('does not change with key order or whitespace', () => {
    const input = sample();
    const reversed = Object.fromEntries(Object.entries(input).reverse());
    const pretty = JSON.stringify(input, null, 2);
    expect(digestOf(reversed)).toBe(digestOf(input));
    expect(digestOf(parseHandoff(pretty))).toBe(digestOf(input));
  });

  it('changes when any value changes', () => {
    const digest = digestOf(sample());
    expect(
      digestOf(sample({ contextSummary: 'QA saw brute force in the logs!' })),
    ).not.toBe(digest);
    expect(digestOf(sample({ to: 'staff-frontend' }))).not.toBe(digest);
    expect(
      digestOf(sample({ createdAt: '2026-01-31T12:00:00.001Z' })),
    ).not.toBe(digest);
  });

  it('refuses to serialize an invalid envelope', () => {
    expect(() => serializeOf(sample({ to: 'admin' }))).toThrow(
      HandoffValidationError,
    );
    expect(() => digestOf(sample({ to: 'director' }))).toThrow(
      ReadOnlyRecipientError,
    );
  });

  it('verifies an expected digest', () => {
    const input = sample();
    const digest = digestOf(input);
    expect(
      verifyHandoffDigest({ envelope: serializeOf(input), digest }),
    ).toEqual(input);
    const tampered = sample({ contextSummary: 'nothing to see' });
    const error = thrown(() =>
      verifyHandoffDigest({ envelope: tampered, digest }),
    );
    expect(HandoffDigestMismatchError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'DIGEST_MISMATCH',
      expected: digest,
      actual: digestOf(tampered),
    });
  });
});

describe('errors', () => {
  it('recognise errors by marker, not by class identity', () => {
    const error = thrown(() => parseHandoff({}));
    const copy = Object.assign(Object.create(null) as object, {
      [Symbol.for('heretek.handoff.error')]: true,
      code: 'INVALID_ENVELOPE',
    });
    expect(HandoffError.isInstance(error)).toBe(true);
    expect(HandoffError.isInstance(copy)).toBe(true);
    // A subclass check is the family marker plus the subclass's codes.
    expect(HandoffValidationError.isInstance(copy)).toBe(true);
    expect(ReadOnlyRecipientError.isInstance(copy)).toBe(false);
    expect(
      HandoffValidationError.isInstance({ code: 'INVALID_ENVELOPE' }),
    ).toBe(false);
    expect(HandoffError.isInstance(new Error('x'))).toBe(false);
    expect(
      HandoffValidationError.isInstance(
        new ReadOnlyRecipientError({ from: 'a', to: 'b' }),
      ),
    ).toBe(false);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe('HandoffValidationError');
  });
});

describe('types', () => {
  it('the declared envelope types match what the zod schema infers (checked by tsc)', () => {
    type Inferred = z.output<ReturnType<typeof handoffEnvelopeSchema>>;
    type InferredInput = z.input<ReturnType<typeof handoffEnvelopeSchema>>;
    const envelope = parseHandoff(sample());
    const inferred: Inferred = envelope;
    const declared: HandoffEnvelope = inferred;
    const input: InferredInput = {
      ...declared,
      artifacts: undefined,
    } satisfies HandoffEnvelopeInput;
    expect(declared).toBe(envelope);
    expect(input.artifacts).toBeUndefined();
    // The exported schema carries the read-only policy too.
    expect(handoffEnvelopeSchema().safeParse(input).success).toBe(true);
    const refused = handoffEnvelopeSchema().safeParse({
      ...declared,
      to: 'director',
    });
    expect(refused.error?.issues).toEqual([
      expect.objectContaining({
        path: ['intent'],
        message: expect.stringContaining('read-only role'),
      }),
    ]);
  });
});
