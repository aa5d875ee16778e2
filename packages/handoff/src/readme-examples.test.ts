// The README examples, type-checked and run, so the documentation cannot drift.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// The imports as the README writes them, then what its tables name.
import {
  createHandoff,
  handoffDigest,
  parseHandoff,
  serializeHandoff,
  sha256Digest,
} from './index.js';
import {
  agentCardFor,
  agentCardsForAllRoles,
  AGENT_CARD_WELL_KNOWN_PATH,
} from './index.js';
import { HandoffError, verifyHandoffDigest } from './index.js';
import { thrown } from './__fixtures__/thrown.js';

describe('README examples', () => {
  it('hands work from the director to staff-backend and back', () => {
    const report = '# Login\nA sixth attempt within a minute succeeds.\n';
    const envelope = createHandoff({
      from: 'director',
      to: 'staff-backend',
      intent: 'mutating',
      task: {
        title: 'Add rate limiting to POST /login',
        details:
          'Five attempts per minute per IP; answer 429 with Retry-After.',
        acceptanceCriteria: ['a sixth attempt within a minute gets 429'],
      },
      contextSummary:
        'QA saw brute force in the logs; the report has the failing check.',
      artifacts: [
        {
          name: 'QA report',
          uri: 'reports/qa/login.md',
          digest: sha256Digest(report),
          mediaType: 'text/markdown',
        },
      ],
      constraints: {
        rules: ['do not change the public API'],
        allowedTargets: ['core'],
        maxToolCalls: 40,
      },
    });
    const body = serializeHandoff(envelope);
    const digest = handoffDigest(envelope);
    const received = parseHandoff(body);
    expect(received).toEqual(envelope);
    expect(verifyHandoffDigest({ envelope: body, digest })).toEqual(envelope);
    expect(received.artifacts[0]?.digest).toBe(
      sha256Digest(Buffer.from(report, 'utf8')),
    );

    // The reply continues the trace and points at the envelope it answers.
    const reply = createHandoff({
      from: 'staff-backend',
      to: 'qa-adversary',
      intent: 'read-only',
      traceId: envelope.traceId,
      parentDigest: digest,
      task: { title: 'Try to get past the new login rate limit' },
      contextSummary: 'Rate limit added in the login handler.',
    });
    expect(reply.traceId).toBe(envelope.traceId);
  });

  it('builds the cards shown in the README', () => {
    const card = agentCardFor('qa-adversary', {
      baseUrl: 'https://agents.example.com/a2a',
      provider: { organization: 'Example', url: 'https://example.com' },
      version: '1.0.0',
    });
    expect(card.supportedInterfaces[0]?.url).toBe(
      'https://agents.example.com/a2a/qa-adversary',
    );
    const legacy = agentCardFor('qa-adversary', {
      baseUrl: 'https://agents.example.com/a2a',
      protocolVersion: '0.3',
    });
    expect(legacy.url).toBe(card.supportedInterfaces[0]?.url);
    const all = agentCardsForAllRoles({
      baseUrl: 'https://agents.example.com/a2a',
    });
    expect(all.director.skills[0]?.id).toBe('heretek.director.work');
    expect(AGENT_CARD_WELL_KNOWN_PATH).toBe('/.well-known/agent-card.json');
  });

  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const blocks = (language: string) =>
    [
      ...readme.matchAll(
        new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'),
      ),
    ].map((match) => match[1] ?? '');

  it('shows the v1.0 card exactly as agentCardFor builds it', () => {
    const [json] = blocks('json');
    expect(json, 'README has no json block').toBeDefined();
    const card = agentCardFor('qa-adversary', {
      baseUrl: 'https://agents.example.com/a2a',
      provider: { organization: 'Example', url: 'https://example.com' },
      version: '1.0.0',
    });
    expect(JSON.parse(json as string)).toEqual(card);
  });

  it('shows the error messages exactly as they are thrown', () => {
    const messageOf = (fn: () => unknown): string => {
      const error = thrown(fn);
      if (HandoffError.isInstance(error)) return error.message;
      throw error;
    };
    const valid = createHandoff({
      from: 'staff-backend',
      to: 'security-researcher',
      intent: 'read-only',
      task: { title: 'Review the login handler' },
      contextSummary: '',
    });
    const invalid = messageOf(() =>
      parseHandoff({
        ...valid,
        to: 'admin',
        task: { ...valid.task, priority: 'high' },
      }),
    );
    const refused = messageOf(() =>
      parseHandoff({ ...valid, to: 'qa-adversary', intent: 'mutating' }),
    );
    expect(blocks('text').map((block) => block.trimEnd())).toEqual([
      invalid,
      refused,
    ]);
  });
});
