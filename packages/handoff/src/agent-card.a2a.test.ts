/**
 * Conformance of the agent cards with the A2A anchors:
 * - v1.0: the REQUIRED fields of `a2a.proto` (normative for v1.0), the
 *   `AgentCard` type and proto-JSON parser of `@a2a-js/sdk`, and the SDK's
 *   own card resolver and client factory over real HTTP on 127.0.0.1;
 * - v0.3: the JSON Schema `a2a.v0.3.0.schema.json` (draft-07) with Ajv, and
 *   the SDK's v0.3 compatibility layer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AgentCard as SdkAgentCard,
  type AgentCapabilities as SdkAgentCapabilities,
  type AgentInterface as SdkAgentInterface,
  type AgentProvider as SdkAgentProvider,
  type AgentSkill as SdkAgentSkill,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { ROLE_NAMES } from '@heretek/prefix';
import Ajv, { type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  protoMessageFields,
  readAnchor,
  type ProtoField,
} from './__fixtures__/anchors.js';
import {
  AGENT_CARD_WELL_KNOWN_PATH,
  agentCardFor,
  type AgentCardOptions,
  type AgentCardV03,
  type AgentCardV1,
} from './index.js';
import type {
  A2AAgentCapabilities,
  A2AAgentInterface,
  A2AAgentProvider,
  A2AAgentSkill,
} from './agent-card.js';

const baseUrl = 'https://agents.example.com/a2a';

/** Option sets covering every branch of the card builder. */
const VARIANTS: AgentCardOptions[] = [
  { baseUrl },
  {
    baseUrl: 'http://127.0.0.1:9999/',
    protocolBindings: ['HTTP+JSON', 'JSONRPC'],
    legacyInterfaces: true,
    tenant: 'team-a',
    name: 'Backend agent',
    version: '2.3.4',
    provider: { organization: 'Example Org', url: 'https://example.org' },
    documentationUrl: 'https://example.org/docs',
    iconUrl: 'https://example.org/icon.png',
    capabilities: { streaming: true, pushNotifications: true },
    bearerAuth: { bearerFormat: 'opaque', description: 'gateway token' },
  },
  { url: 'https://director.example/rpc', bearerAuth: true },
];

const v1Cards: AgentCardV1[] = ROLE_NAMES.flatMap((role) =>
  VARIANTS.map((options) =>
    agentCardFor(role, { ...options, protocolVersion: '1.0' }),
  ),
);
const v03Cards: AgentCardV03[] = ROLE_NAMES.flatMap((role) =>
  VARIANTS.map((options) => {
    const { legacyInterfaces: _legacy, tenant: _tenant, ...rest } = options;
    return agentCardFor(role, { ...rest, protocolVersion: '0.3' });
  }),
);

describe('v1.0 cards against a2a.proto', () => {
  const proto = readAnchor('a2a.proto');
  const messages = {
    AgentCard: protoMessageFields(proto, 'AgentCard'),
    AgentInterface: protoMessageFields(proto, 'AgentInterface'),
    AgentSkill: protoMessageFields(proto, 'AgentSkill'),
    AgentCapabilities: protoMessageFields(proto, 'AgentCapabilities'),
    AgentProvider: protoMessageFields(proto, 'AgentProvider'),
    SecurityScheme: protoMessageFields(proto, 'SecurityScheme'),
    HTTPAuthSecurityScheme: protoMessageFields(proto, 'HTTPAuthSecurityScheme'),
    SecurityRequirement: protoMessageFields(proto, 'SecurityRequirement'),
    StringList: protoMessageFields(proto, 'StringList'),
  };
  const required = (fields: ProtoField[]) =>
    fields.filter((f) => f.required).map((f) => f.jsonName);

  it('reads the REQUIRED fields from the proto text', () => {
    // Guards the little proto reader: these are the fields the v1.0 spec marks REQUIRED.
    expect(required(messages.AgentCard).sort()).toEqual(
      [
        'capabilities',
        'defaultInputModes',
        'defaultOutputModes',
        'description',
        'name',
        'skills',
        'supportedInterfaces',
        'version',
      ].sort(),
    );
    expect(required(messages.AgentInterface).sort()).toEqual([
      'protocolBinding',
      'protocolVersion',
      'url',
    ]);
    expect(required(messages.AgentSkill).sort()).toEqual([
      'description',
      'id',
      'name',
      'tags',
    ]);
    expect(required(messages.AgentCapabilities)).toEqual([]);
    expect(required(messages.AgentProvider).sort()).toEqual([
      'organization',
      'url',
    ]);
    expect(messages.SecurityScheme.map((f) => f.jsonName)).toContain(
      'httpAuthSecurityScheme',
    );
    expect(required(messages.HTTPAuthSecurityScheme)).toEqual(['scheme']);
    expect(messages.SecurityRequirement.map((f) => f.jsonName)).toEqual([
      'schemes',
    ]);
    expect(messages.StringList.map((f) => f.jsonName)).toEqual(['list']);
  });

  /** Every REQUIRED field present and set (proto3: not the empty default); no field the proto lacks. */
  function checkMessage(
    value: Record<string, unknown>,
    fields: ProtoField[],
    where: string,
  ): void {
    const names = new Set(fields.map((f) => f.jsonName));
    for (const key of Object.keys(value)) {
      expect(
        names.has(key),
        `${where}.${key} is not a field of the proto message`,
      ).toBe(true);
    }
    for (const field of fields.filter((f) => f.required)) {
      const present = value[field.jsonName];
      expect(present, `${where}.${field.jsonName} is REQUIRED`).toBeDefined();
      if (field.repeated)
        expect(
          (present as unknown[]).length,
          `${where}.${field.jsonName} is empty`,
        ).toBeGreaterThan(0);
      if (field.type === 'string')
        expect(present, `${where}.${field.jsonName} is empty`).not.toBe('');
    }
  }

  it.each(v1Cards.map((card, index) => [index, card] as const))(
    'card %i has every REQUIRED field and no unknown one',
    (_index, card) => {
      checkMessage(card, messages.AgentCard, 'AgentCard');
      card.supportedInterfaces.forEach((entry, i) =>
        checkMessage(
          entry,
          messages.AgentInterface,
          `supportedInterfaces[${i}]`,
        ),
      );
      card.skills.forEach((skill, i) =>
        checkMessage(skill, messages.AgentSkill, `skills[${i}]`),
      );
      checkMessage(
        card.capabilities,
        messages.AgentCapabilities,
        'capabilities',
      );
      if (card.provider)
        checkMessage(card.provider, messages.AgentProvider, 'provider');
      for (const [name, scheme] of Object.entries(card.securitySchemes ?? {})) {
        checkMessage(
          scheme,
          messages.SecurityScheme,
          `securitySchemes.${name}`,
        );
        expect(
          Object.keys(scheme),
          `securitySchemes.${name} sets exactly one member of the oneof`,
        ).toHaveLength(1);
        checkMessage(
          scheme.httpAuthSecurityScheme,
          messages.HTTPAuthSecurityScheme,
          `securitySchemes.${name}.httpAuthSecurityScheme`,
        );
      }
      card.securityRequirements?.forEach((requirement, i) => {
        checkMessage(
          requirement,
          messages.SecurityRequirement,
          `securityRequirements[${i}]`,
        );
        for (const [name, list] of Object.entries(requirement.schemes)) {
          expect(
            card.securitySchemes?.[name],
            `securityRequirements[${i}] names the undeclared scheme ${name}`,
          ).toBeDefined();
          checkMessage(
            list,
            messages.StringList,
            `securityRequirements[${i}].schemes.${name}`,
          );
        }
      });
      expect(card.supportedInterfaces[0]?.protocolVersion).toBe('1.0');
    },
  );
});

/** Arbitrary valid agent card options. */
const cardOptions = fc.record(
  {
    baseUrl: fc.webUrl({ validSchemes: ['https', 'http'] }),
    protocolBindings: fc.uniqueArray(
      fc.constantFrom('JSONRPC' as const, 'HTTP+JSON' as const),
      { minLength: 1 },
    ),
    legacyInterfaces: fc.boolean(),
    tenant: fc.stringMatching(/^[a-z0-9-]{1,20}$/),
    version: fc.stringMatching(/^\d{1,3}\.\d{1,3}\.\d{1,3}$/),
    provider: fc.record({
      organization: fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,20}$/),
      url: fc.webUrl(),
    }),
    capabilities: fc.record({
      streaming: fc.boolean(),
      pushNotifications: fc.boolean(),
    }),
    bearerAuth: fc.boolean(),
  },
  { requiredKeys: ['baseUrl'] },
);

/** The proto-JSON wire form of an SDK message type: every field optional, oneofs excluded. */
type Wire<T> = T extends readonly (infer U)[]
  ? Wire<U>[]
  : T extends object
    ? { [K in keyof T]?: Wire<T[K]> }
    : T;

/** `true` when every key of `Ours` is also a key of `Theirs`. */
type NoExtraKeys<Ours, Theirs> = [Exclude<keyof Ours, keyof Theirs>] extends [
  never,
]
  ? true
  : false;

describe('v1.0 cards against @a2a-js/sdk', () => {
  it('fit the SDK AgentCard type (checked by tsc)', () => {
    const card = agentCardFor('staff-backend', { baseUrl });
    // Compile-time 1: every key of our types is a key of the SDK type (a renamed
    // or invented field makes one of these `false` and fails typecheck).
    const noExtraKeys: [
      NoExtraKeys<AgentCardV1, SdkAgentCard>,
      NoExtraKeys<A2AAgentInterface, SdkAgentInterface>,
      NoExtraKeys<A2AAgentSkill, SdkAgentSkill>,
      NoExtraKeys<A2AAgentCapabilities, SdkAgentCapabilities>,
      NoExtraKeys<A2AAgentProvider, SdkAgentProvider>,
    ] = [true, true, true, true, true];
    // Compile-time 2: every value has the SDK's type. (securitySchemes are a proto
    // oneof in the SDK type; their wire form is checked by the round trip below.)
    const wire: Wire<Omit<SdkAgentCard, 'securitySchemes'>> =
      card satisfies Omit<AgentCardV1, 'securitySchemes'>;
    const decoded: SdkAgentCard = SdkAgentCard.fromJSON(card);
    expect(noExtraKeys.every(Boolean)).toBe(true);
    expect(decoded.supportedInterfaces[0]?.url).toBe(
      wire.supportedInterfaces?.[0]?.url,
    );
  });

  it.each(v1Cards.map((card, index) => [index, card] as const))(
    'card %i survives the SDK proto-JSON parser unchanged (no unknown, mistyped or defaulted field)',
    (_index, card) => {
      const decoded = SdkAgentCard.fromJSON(card);
      expect(decoded.name).toBe(card.name);
      expect(decoded.skills).toHaveLength(card.skills.length);
      expect(SdkAgentCard.toJSON(decoded)).toEqual(card);
    },
  );

  it('property: any valid options give a card the SDK parser keeps unchanged', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ROLE_NAMES),
        cardOptions,
        (role, value) => {
          const card = agentCardFor(role, value);
          expect(SdkAgentCard.toJSON(SdkAgentCard.fromJSON(card))).toEqual(
            card,
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('v0.3 cards against a2a.v0.3.0.schema.json', () => {
  const schema = JSON.parse(readAnchor('a2a.v0.3.0.schema.json')) as {
    $schema: string;
    definitions: Record<string, Record<string, unknown>>;
  };
  let validate: ValidateFunction;
  let validateClosed: ValidateFunction;

  beforeAll(() => {
    // The anchor declares draft-07, which is what the default Ajv class implements.
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    const ajv = new Ajv({ allErrors: true, strict: false });
    ajv.addSchema(schema, 'a2a-v0.3.0');
    validate = ajv.getSchema(
      'a2a-v0.3.0#/definitions/AgentCard',
    ) as ValidateFunction;
    // Same schema with closed objects, so a misspelt or invented key fails too.
    const closed = structuredClone(schema);
    for (const name of [
      'AgentCard',
      'AgentSkill',
      'AgentCapabilities',
      'AgentInterface',
      'AgentProvider',
      'HTTPAuthSecurityScheme',
    ]) {
      const definition = closed.definitions[name];
      if (!definition)
        throw new Error(`definition ${name} missing from the anchor`);
      definition.additionalProperties = false;
    }
    const closedAjv = new Ajv({ allErrors: true, strict: false });
    closedAjv.addSchema(closed, 'a2a-v0.3.0-closed');
    validateClosed = closedAjv.getSchema(
      'a2a-v0.3.0-closed#/definitions/AgentCard',
    ) as ValidateFunction;
  });

  it('rejects a card without its required url (the validator is live)', () => {
    const { url: _url, ...broken } = agentCardFor('director', {
      baseUrl,
      protocolVersion: '0.3',
    });
    expect(validate(broken)).toBe(false);
    expect(validate.errors?.[0]?.params).toEqual({ missingProperty: 'url' });
    expect(
      validateClosed({
        ...agentCardFor('director', { baseUrl, protocolVersion: '0.3' }),
        supportedInterfaces: [],
      }),
    ).toBe(false);
  });

  it('property: any valid options give a v0.3 card the closed schema accepts', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ROLE_NAMES),
        cardOptions,
        (role, value) => {
          const { legacyInterfaces: _legacy, tenant: _tenant, ...rest } = value;
          const card = agentCardFor(role, { ...rest, protocolVersion: '0.3' });
          expect(
            validateClosed(card),
            JSON.stringify(validateClosed.errors),
          ).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it.each(v03Cards.map((card, index) => [index, card] as const))(
    'card %i validates, also with closed objects',
    (_index, card) => {
      expect(validate(card), JSON.stringify(validate.errors)).toBe(true);
      expect(validateClosed(card), JSON.stringify(validateClosed.errors)).toBe(
        true,
      );
      expect(card.protocolVersion).toBe('0.3.0');
    },
  );
});

describe('cards served over HTTP to the SDK client', () => {
  let server: Server;
  let origin: string;
  const v1 = agentCardFor('staff-backend', {
    baseUrl: 'http://127.0.0.1:1/a2a',
    bearerAuth: true,
  });
  const v03 = agentCardFor('staff-backend', {
    baseUrl: 'http://127.0.0.1:1/a2a',
    protocolVersion: '0.3',
  });

  beforeAll(async () => {
    server = createServer((request, response) => {
      const body =
        request.url === AGENT_CARD_WELL_KNOWN_PATH
          ? v1
          : request.url === `/legacy${AGENT_CARD_WELL_KNOWN_PATH}`
            ? v03
            : undefined;
      response.writeHead(body ? 200 : 404, {
        'content-type': 'application/json',
      });
      response.end(body ? JSON.stringify(body) : '{}');
    });
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    if (!server?.listening) return;
    server.closeAllConnections(); // keep-alive sockets of the SDK client must not hold the close
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('resolves the v1.0 card and builds a JSON-RPC client for A2A 1.0 from it', async () => {
    const resolver = new DefaultAgentCardResolver();
    const resolved = await resolver.resolve(`${origin}/`);
    expect(resolved).toEqual(SdkAgentCard.fromJSON(v1));
    const client = await new ClientFactory({
      transports: [new JsonRpcTransportFactory()],
      cardResolver: resolver,
    }).createFromUrl(`${origin}/`);
    expect(client.protocolVersion).toBe('1.0');
  });

  it('resolves the v0.3 card through the SDK compatibility layer into the same endpoint', async () => {
    const resolver = new DefaultAgentCardResolver({
      legacyCompat: { enabled: true },
    });
    const resolved = await resolver.resolve(`${origin}/legacy/`);
    expect(resolved.supportedInterfaces).toEqual([
      {
        url: v03.url,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: '0.3.0',
      },
      {
        url: v03.url,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: '0.3',
      },
    ]);
    expect(resolved.skills.map((skill) => skill.id)).toEqual(
      v1.skills.map((skill) => skill.id),
    );
    expect(resolved.name).toBe(v1.name);
    const client = await new ClientFactory({
      transports: [
        new JsonRpcTransportFactory({ legacyCompat: { enabled: true } }),
        new RestTransportFactory(),
      ],
      cardResolver: resolver,
    }).createFromUrl(`${origin}/legacy/`);
    expect(client.protocolVersion).toMatch(/^0\.3/);
  });
});
