import { homedir } from 'node:os';
import { ROLE_NAMES, ROLES, isReadOnlyRole } from '@heretek/prefix';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import {
  HANDOFF_MEDIA_TYPE,
  agentCardFor,
  agentCardsForAllRoles,
  type AgentCardOptions,
} from './index.js';
import { skillsForRole, type AgentCardOptionsV1 } from './agent-card.js';
import { VERSION } from './version.js';
import { validationError } from './__fixtures__/thrown.js';

const baseUrl = 'https://agents.example.com/a2a';

describe('agentCardFor (v1.0 shape)', () => {
  it.each(ROLE_NAMES)('describes %s from the role table', (role) => {
    const card = agentCardFor(role, { baseUrl });
    expect(card.name).toBe(`heretek ${role}`);
    expect(card.description).toBe(ROLES[role].summary);
    expect(card.version).toBe(VERSION);
    expect(card.supportedInterfaces).toEqual([
      {
        url: `${baseUrl}/${role}`,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      },
    ]);
    expect(card.capabilities).toEqual({
      streaming: false,
      pushNotifications: false,
    });
    expect(card.defaultInputModes).toContain(HANDOFF_MEDIA_TYPE);
    expect(card.skills.map((skill) => skill.id)).toEqual([
      `heretek.${role}.work`,
      `heretek.${role}.handoff`,
    ]);
    expect('url' in card).toBe(false);
    expect('protocolVersion' in card).toBe(false);
  });

  it('derives skills from permissions: read-only roles say so and refuse mutating handoffs', () => {
    for (const role of ROLE_NAMES) {
      const [work, handoff] = skillsForRole(role);
      const readOnly = isReadOnlyRole(role);
      expect(work?.tags).toContain(readOnly ? 'read-only' : 'mutating');
      expect(work?.description.startsWith(ROLES[role].summary)).toBe(true);
      expect(work?.description).toContain(
        readOnly ? 'never calls a mutating tool' : 'May call mutating tools',
      );
      expect(handoff?.description).toContain(
        readOnly
          ? 'refuses mutating work'
          : 'accepts intent "read-only" and "mutating"',
      );
      expect(handoff?.inputModes).toEqual([HANDOFF_MEDIA_TYPE]);
    }
  });

  it('gives stable skill ids, unique across roles', () => {
    const ids = ROLE_NAMES.flatMap((role) =>
      skillsForRole(role).map((skill) => skill.id),
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([
      'heretek.director.work',
      'heretek.director.handoff',
      'heretek.staff-backend.work',
      'heretek.staff-backend.handoff',
      'heretek.staff-frontend.work',
      'heretek.staff-frontend.handoff',
      'heretek.staff-mobile.work',
      'heretek.staff-mobile.handoff',
      'heretek.security-researcher.work',
      'heretek.security-researcher.handoff',
      'heretek.qa-adversary.work',
      'heretek.qa-adversary.handoff',
    ]);
  });

  it('is reproducible: same options, same bytes; nothing volatile inside', () => {
    const options: AgentCardOptions = {
      baseUrl,
      provider: { organization: 'Example', url: 'https://example.com' },
    };
    for (const role of ROLE_NAMES) {
      const first = canonicalize(agentCardFor(role, options));
      expect(canonicalize(agentCardFor(role, options))).toBe(first);
      expect(first).not.toContain(process.cwd());
      expect(first).not.toContain(homedir());
      expect(first).not.toMatch(/\d{4}-\d{2}-\d{2}/);
      expect(first).not.toMatch(/"\/[^"]*"/); // no absolute path as a value
    }
  });

  it('appends the role to baseUrl with or without a trailing slash, keeps a query', () => {
    expect(
      agentCardFor('director', { baseUrl: 'https://x.example/a2a/' })
        .supportedInterfaces[0]?.url,
    ).toBe('https://x.example/a2a/director');
    expect(
      agentCardFor('director', { baseUrl: 'http://127.0.0.1:8080' })
        .supportedInterfaces[0]?.url,
    ).toBe('http://127.0.0.1:8080/director');
    expect(
      agentCardFor('director', { baseUrl: 'https://x.example/a2a?v=1' })
        .supportedInterfaces[0]?.url,
    ).toBe('https://x.example/a2a/director?v=1');
    expect(
      agentCardFor('director', { baseUrl, url: 'https://director.example/rpc' })
        .supportedInterfaces[0]?.url,
    ).toBe('https://director.example/rpc');
  });

  it('lists every binding, an optional tenant, and v0.3 mirror interfaces on request', () => {
    const card = agentCardFor('staff-mobile', {
      baseUrl,
      protocolBindings: ['HTTP+JSON', 'JSONRPC'],
      legacyInterfaces: true,
      tenant: 'team-a',
    });
    const url = `${baseUrl}/staff-mobile`;
    expect(card.supportedInterfaces).toEqual([
      {
        url,
        protocolBinding: 'HTTP+JSON',
        protocolVersion: '1.0',
        tenant: 'team-a',
      },
      {
        url,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
        tenant: 'team-a',
      },
      {
        url,
        protocolBinding: 'HTTP+JSON',
        protocolVersion: '0.3',
        tenant: 'team-a',
      },
      {
        url,
        protocolBinding: 'JSONRPC',
        protocolVersion: '0.3',
        tenant: 'team-a',
      },
    ]);
  });

  it('declares bearer authentication on request', () => {
    const card = agentCardFor('director', {
      baseUrl,
      bearerAuth: { bearerFormat: 'opaque' },
    });
    expect(card.securitySchemes).toEqual({
      bearer: {
        httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'opaque' },
      },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: {} } }]);
    expect(
      agentCardFor('director', { baseUrl }).securitySchemes,
    ).toBeUndefined();
  });

  it('builds all six cards at once', () => {
    const cards = agentCardsForAllRoles({ baseUrl });
    expect(Object.keys(cards)).toEqual([...ROLE_NAMES]);
    expect(cards['qa-adversary']).toEqual(
      agentCardFor('qa-adversary', { baseUrl }),
    );
    expect(
      validationError(() =>
        agentCardsForAllRoles({ url: 'https://one.example' }),
      ).issues[0]?.path,
    ).toBe('url');
  });
});

describe('agentCardFor (v0.3 shape)', () => {
  it.each(ROLE_NAMES)(
    'describes %s with url, preferredTransport and protocolVersion 0.3.0',
    (role) => {
      const card = agentCardFor(role, {
        baseUrl,
        protocolVersion: '0.3',
        protocolBindings: ['JSONRPC', 'HTTP+JSON'],
        bearerAuth: true,
      });
      const url = `${baseUrl}/${role}`;
      expect(card).toMatchObject({
        protocolVersion: '0.3.0',
        name: `heretek ${role}`,
        url,
        preferredTransport: 'JSONRPC',
        additionalInterfaces: [
          { url, transport: 'JSONRPC' },
          { url, transport: 'HTTP+JSON' },
        ],
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
        security: [{ bearer: [] }],
      });
      expect(card.skills).toEqual(skillsForRole(role));
      expect('supportedInterfaces' in card).toBe(false);
    },
  );
});

describe('agentCardFor options', () => {
  it('refuses an unknown role with UNKNOWN_ROLE', () => {
    const error = validationError(() => agentCardFor('admin', { baseUrl }));
    expect(error.code).toBe('UNKNOWN_ROLE');
    expect(error.message).toContain(
      'role: Unknown role "admin": expected one of director',
    );
  });

  it.each([
    [{}, 'baseUrl', /give baseUrl/],
    [{ baseUrl: '/srv/a2a' }, 'baseUrl', /absolute http\(s\) URL/],
    [{ baseUrl: 'ftp://x.example' }, 'baseUrl', /absolute http\(s\) URL/],
    [{ baseUrl, extra: true }, 'extra', /unknown key "extra"/],
    [{ baseUrl, protocolVersion: '0.2' }, 'protocolVersion', /"1.0" or "0.3"/],
    [{ baseUrl, protocolBindings: [] }, 'protocolBindings', /at least one/],
    [
      { baseUrl, protocolBindings: ['GRPC'] },
      'protocolBindings[0]',
      /"JSONRPC" or "HTTP\+JSON"/,
    ],
    [
      { baseUrl, provider: { organization: 'x' } },
      'provider.url',
      /provider.url/,
    ],
    [
      { baseUrl, protocolVersion: '0.3', tenant: 't' },
      'tenant',
      /only in v1.0 cards/,
    ],
    [
      { baseUrl, capabilities: { streaming: 'yes' } },
      'capabilities.streaming',
      /boolean/,
    ],
    [
      { baseUrl, capabilities: null },
      'capabilities',
      /capabilities must be an object, not null/,
    ],
    [
      { baseUrl, provider: 'Example' },
      'provider',
      /provider must be an object, not a string/,
    ],
    [
      { baseUrl, bearerAuth: 'yes' },
      'bearerAuth',
      /bearerAuth must be true, false or \{ bearerFormat\?, description\? \}/,
    ],
    [undefined, '(root)', /the options argument is required/],
  ])('refuses %j at %s', (options, path, message) => {
    const error = validationError(() =>
      agentCardFor('director', options as AgentCardOptions),
    );
    expect(error.code).toBe('INVALID_AGENT_CARD_OPTIONS');
    expect(error.issues.map((issue) => issue.path)).toContain(path);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('Invalid input');
  });

  it('refuses missing options for all roles with a typed error', () => {
    const error = validationError(() =>
      agentCardsForAllRoles(undefined as unknown as AgentCardOptionsV1),
    );
    expect(error.code).toBe('INVALID_AGENT_CARD_OPTIONS');
    expect(error.message).toMatch(/the options argument is required/);
  });
});
