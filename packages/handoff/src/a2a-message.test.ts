import { Message as SdkMessage } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { protoMessageFields, readAnchor } from './__fixtures__/anchors.js';
import {
  HANDOFF_MEDIA_TYPE,
  HandoffDigestMismatchError,
  createHandoff,
  handoffDigest,
  handoffFromA2AMessage,
  handoffToA2AMessage,
} from './index.js';
import { HANDOFF_DIGEST_METADATA_KEY } from './a2a-message.js';
import { validationError } from './__fixtures__/thrown.js';

const envelope = createHandoff({
  from: 'director',
  to: 'security-researcher',
  intent: 'read-only',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  createdAt: '2026-01-31T12:00:00.000Z',
  task: { title: 'Reverse the license check in app.bin' },
  contextSummary: 'The vendor binary is in the artifacts.',
  artifacts: [
    {
      name: 'binary',
      uri: 'samples/app.bin',
      digest: `sha256:${'d'.repeat(64)}`,
    },
  ],
});

describe('handoff as an A2A v1.0 message', () => {
  const message = handoffToA2AMessage({ envelope });

  it('carries the envelope as one data part, keyed by digest and trace', () => {
    const digest = handoffDigest(envelope);
    expect(message).toEqual({
      messageId: digest,
      contextId: envelope.traceId,
      role: 'ROLE_USER',
      parts: [{ data: envelope, mediaType: HANDOFF_MEDIA_TYPE }],
      metadata: { [HANDOFF_DIGEST_METADATA_KEY]: digest },
    });
    expect(handoffToA2AMessage({ envelope, messageId: 'm-1' }).messageId).toBe(
      'm-1',
    );
  });

  it('sets every REQUIRED field of Message and Part in a2a.proto and nothing else', () => {
    const proto = readAnchor('a2a.proto');
    const messageFields = protoMessageFields(proto, 'Message');
    const partFields = [...protoMessageFields(proto, 'Part')];
    expect(
      messageFields
        .filter((f) => f.required)
        .map((f) => f.jsonName)
        .sort(),
    ).toEqual(['messageId', 'parts', 'role']);
    for (const key of Object.keys(message))
      expect(messageFields.map((f) => f.jsonName)).toContain(key);
    for (const key of Object.keys(message.parts[0]))
      expect(partFields.map((f) => f.jsonName)).toContain(key);
  });

  it('survives the SDK proto-JSON codec unchanged and parses back to the envelope', () => {
    const decoded = SdkMessage.fromJSON(message);
    expect(decoded.parts[0]?.content?.$case).toBe('data');
    expect(decoded.role).toBe(1); // ROLE_USER
    const wire = SdkMessage.toJSON(decoded);
    expect(wire).toEqual(message);
    expect(handoffFromA2AMessage(JSON.parse(JSON.stringify(wire)))).toEqual(
      envelope,
    );
  });

  it('ignores other parts and refuses zero or several handoff parts', () => {
    const withText = {
      ...message,
      parts: [{ text: 'please have a look' }, ...message.parts],
    };
    expect(handoffFromA2AMessage(withText)).toEqual(envelope);
    expect(
      validationError(() =>
        handoffFromA2AMessage({ ...message, parts: [{ text: 'hi' }] }),
      ),
    ).toMatchObject({
      code: 'INVALID_A2A_MESSAGE',
      issues: [
        expect.objectContaining({
          path: 'parts',
          message: expect.stringMatching(/found 0/),
        }),
      ],
    });
    expect(
      validationError(() =>
        handoffFromA2AMessage({
          ...message,
          parts: [...message.parts, ...message.parts],
        }),
      ).message,
    ).toMatch(/found 2/);
    expect(
      validationError(() =>
        handoffFromA2AMessage({
          ...message,
          parts: [{ mediaType: HANDOFF_MEDIA_TYPE, text: '{}' }],
        }),
      ).issues[0]?.path,
    ).toBe('parts[0].data');
    expect(validationError(() => handoffFromA2AMessage('nope')).code).toBe(
      'INVALID_A2A_MESSAGE',
    );
  });

  it('checks the recorded digest and validates the envelope strictly', () => {
    const tampered = {
      ...message,
      parts: [
        {
          ...message.parts[0],
          data: { ...envelope, contextSummary: 'changed' },
        },
      ],
    };
    expect(() => handoffFromA2AMessage(tampered)).toThrow(
      HandoffDigestMismatchError,
    );
    const unknownKey = {
      parts: [{ ...message.parts[0], data: { ...envelope, extra: 1 } }],
    };
    expect(
      validationError(() => handoffFromA2AMessage(unknownKey)).issues[0]?.path,
    ).toBe('extra');
  });
});
