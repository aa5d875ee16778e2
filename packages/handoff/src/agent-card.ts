import {
  canCallMutating,
  getRole,
  isReadOnlyRole,
  isRoleName,
  ROLE_NAMES,
  type RoleName,
} from '@heretek/prefix';
import { z } from 'zod';
import { HANDOFF_MEDIA_TYPE, canReceiveHandoff } from './envelope-schema.js';
import { HandoffValidationError, HandoffErrorCode } from './errors.js';
import { objectError, toHandoffIssues } from './issues.js';
import { VERSION } from './version.js';

/** The A2A protocol version of the current card shape (`supportedInterfaces`). */
export const A2A_PROTOCOL_VERSION = '1.0';

/** The A2A protocol version written into v0.3-shaped cards (`protocolVersion`). */
export const A2A_LEGACY_PROTOCOL_VERSION = '0.3.0';

/** Where A2A peers look for an agent card, relative to the agent's origin. */
export const AGENT_CARD_WELL_KNOWN_PATH = '/.well-known/agent-card.json';

/** Protocol bindings a heretek role can be reached over. */
export type A2AProtocolBinding = 'JSONRPC' | 'HTTP+JSON';

/** v1.0 `AgentInterface` (proto JSON form): one URL, binding and protocol version. */
export type A2AAgentInterface = {
  /** Absolute URL of the endpoint. */
  url: string;
  /** `JSONRPC` or `HTTP+JSON`. */
  protocolBinding: string;
  /** A2A version spoken there: `1.0`, or `0.3` for a legacy mirror entry. */
  protocolVersion: string;
  /** Routing identifier clients must send, when the endpoint serves many agents. */
  tenant?: string;
};

/** Agent provider, in both card shapes. */
export type A2AAgentProvider = {
  /** Organization name. */
  organization: string;
  /** Organization website or documentation URL. */
  url: string;
};

/** v1.0 `AgentSkill` (proto JSON form). */
export type A2AAgentSkill = {
  /** Stable identifier: `heretek.<role>.<skill>`. */
  id: string;
  /** Human-readable name. */
  name: string;
  /** What the skill does. */
  description: string;
  /** Keywords. */
  tags: string[];
  /** Input media types, when they differ from the card's defaults. */
  inputModes?: string[];
  /** Output media types, when they differ from the card's defaults. */
  outputModes?: string[];
};

/** v1.0 `AgentCapabilities`. */
export type A2AAgentCapabilities = {
  /** Streaming responses. */
  streaming?: boolean;
  /** Push notifications for task updates. */
  pushNotifications?: boolean;
};

/** v1.0 `SecurityScheme` (proto JSON form), as written by this package. */
export type A2ASecuritySchemeV1 = {
  /** HTTP authentication, here always the `Bearer` scheme. */
  httpAuthSecurityScheme: {
    /** HTTP authentication scheme (RFC 7235), here `Bearer`. */
    scheme: string;
    /** Hint on the token format, e.g. `JWT`. */
    bearerFormat?: string;
    /** What the token is and where to get it. */
    description?: string;
  };
};

/** A2A v1.0 agent card in its JSON wire form (proto JSON of `lf.a2a.v1.AgentCard`). */
export type AgentCardV1 = {
  /** Human-readable agent name. */
  name: string;
  /** What the agent is for. */
  description: string;
  /** Endpoints, preferred first. */
  supportedInterfaces: A2AAgentInterface[];
  /** Who runs the agent. */
  provider?: A2AAgentProvider;
  /** The agent's version. */
  version: string;
  /** Documentation URL. */
  documentationUrl?: string;
  /** Optional protocol features. */
  capabilities: A2AAgentCapabilities;
  /** Security schemes by name. */
  securitySchemes?: Record<string, A2ASecuritySchemeV1>;
  /** Which schemes a caller must satisfy (OR of ANDs). */
  securityRequirements?: {
    /** Scheme name to the scopes it needs (`{}` when it needs none). */
    schemes: Record<
      string,
      {
        /** Required scopes. */
        list?: string[];
      }
    >;
  }[];
  /** Input media types accepted by every skill unless it says otherwise. */
  defaultInputModes: string[];
  /** Output media types produced by every skill unless it says otherwise. */
  defaultOutputModes: string[];
  /** What the agent can do. */
  skills: A2AAgentSkill[];
  /** Icon URL. */
  iconUrl?: string;
};

/** A2A v0.3 agent card (JSON Schema `#/definitions/AgentCard` of A2A v0.3.0). */
export type AgentCardV03 = {
  /** Always `0.3.0`. */
  protocolVersion: string;
  /** Human-readable agent name. */
  name: string;
  /** What the agent is for. */
  description: string;
  /** Preferred endpoint. */
  url: string;
  /** Transport at `url`. */
  preferredTransport: string;
  /** Every endpoint, including the preferred one. */
  additionalInterfaces: {
    /** Absolute URL of the endpoint. */
    url: string;
    /** `JSONRPC` or `HTTP+JSON`. */
    transport: string;
  }[];
  /** Who runs the agent. */
  provider?: A2AAgentProvider;
  /** The agent's version. */
  version: string;
  /** Documentation URL. */
  documentationUrl?: string;
  /** Icon URL. */
  iconUrl?: string;
  /** Optional protocol features. */
  capabilities: A2AAgentCapabilities;
  /** Security schemes by name (OpenAPI 3.0 style). */
  securitySchemes?: Record<
    string,
    {
      /** OpenAPI security scheme type: always `http` here. */
      type: 'http';
      /** HTTP authentication scheme, here `bearer`. */
      scheme: string;
      /** Hint on the token format, e.g. `JWT`. */
      bearerFormat?: string;
      /** What the token is and where to get it. */
      description?: string;
    }
  >;
  /** Which schemes a caller must satisfy. */
  security?: Record<string, string[]>[];
  /** Input media types. */
  defaultInputModes: string[];
  /** Output media types. */
  defaultOutputModes: string[];
  /** What the agent can do. */
  skills: A2AAgentSkill[];
};

const httpUrl = (what: string) =>
  z.string({ error: `${what} must be a string.` }).refine(
    (value) => {
      if (!URL.canParse(value)) return false;
      const url = new URL(value);
      return (
        (url.protocol === 'https:' || url.protocol === 'http:') &&
        url.hash === ''
      );
    },
    {
      error: `${what} must be an absolute http(s) URL without a #fragment, e.g. https://agents.example.com/a2a.`,
    },
  );

const line = (what: string, max: number) =>
  z
    .string({ error: `${what} must be a string.` })
    .min(1, { error: `${what} must not be empty.` })
    .max(max, { error: `${what} is longer than ${max} characters.` })
    .refine((value) => !/[\r\n]/.test(value), {
      error: `${what} must be a single line.`,
    });

function buildOptionsSchema() {
  return z
    .strictObject(
      {
        baseUrl: httpUrl('baseUrl').optional(),
        url: httpUrl('url').optional(),
        protocolVersion: z
          .enum(['1.0', '0.3'], {
            error: 'protocolVersion must be "1.0" or "0.3".',
          })
          .default('1.0'),
        protocolBindings: z
          .array(
            z.enum(['JSONRPC', 'HTTP+JSON'], {
              error: 'protocol binding must be "JSONRPC" or "HTTP+JSON".',
            }),
            {
              error: 'protocolBindings must be an array.',
            },
          )
          .min(1, { error: 'protocolBindings must name at least one binding.' })
          .refine((bindings) => new Set(bindings).size === bindings.length, {
            error: 'protocolBindings lists a binding twice.',
          })
          .default(['JSONRPC']),
        legacyInterfaces: z
          .boolean({ error: 'legacyInterfaces must be a boolean.' })
          .default(false),
        tenant: line('tenant', 200).optional(),
        name: line('name', 200).optional(),
        version: line('version', 100).default(VERSION),
        provider: z
          .strictObject(
            {
              organization: line('provider.organization', 200),
              url: httpUrl('provider.url'),
            },
            { error: objectError('provider') },
          )
          .optional(),
        documentationUrl: httpUrl('documentationUrl').optional(),
        iconUrl: httpUrl('iconUrl').optional(),
        capabilities: z
          .strictObject(
            {
              streaming: z
                .boolean({ error: 'capabilities.streaming must be a boolean.' })
                .default(false),
              pushNotifications: z
                .boolean({
                  error: 'capabilities.pushNotifications must be a boolean.',
                })
                .default(false),
            },
            { error: objectError('capabilities') },
          )
          .default({ streaming: false, pushNotifications: false }),
        bearerAuth: z
          .union(
            [
              z.boolean(),
              z.strictObject({
                bearerFormat: line('bearerAuth.bearerFormat', 100).optional(),
                description: line('bearerAuth.description', 1000).optional(),
              }),
            ],
            {
              error:
                'bearerAuth must be true, false or { bearerFormat?, description? }.',
            },
          )
          .default(false),
      },
      { error: objectError('the options argument') },
    )
    .superRefine((options, context) => {
      if (options.baseUrl === undefined && options.url === undefined) {
        context.addIssue({
          code: 'custom',
          path: ['baseUrl'],
          message:
            'give baseUrl (the role is appended as a path segment) or url (the exact endpoint).',
        });
      }
      if (
        options.protocolVersion === '0.3' &&
        (options.legacyInterfaces || options.tenant !== undefined)
      ) {
        context.addIssue({
          code: 'custom',
          path: [options.tenant !== undefined ? 'tenant' : 'legacyInterfaces'],
          message:
            'tenant and legacyInterfaces exist only in v1.0 cards; drop them for protocolVersion "0.3".',
        });
      }
    });
}

let cachedOptionsSchema: ReturnType<typeof buildOptionsSchema> | undefined;

/** Options of {@link agentCardFor}. */
export type AgentCardOptions = {
  /**
   * Base URL of the A2A endpoints; the role name is appended as a path
   * segment (`https://agents.example.com/a2a` gives
   * `https://agents.example.com/a2a/staff-backend`). Either this or `url`.
   */
  baseUrl?: string;
  /** The exact endpoint URL for this role; wins over `baseUrl`. */
  url?: string;
  /** Card shape: `1.0` (default, `supportedInterfaces`) or `0.3` for older peers. */
  protocolVersion?: '1.0' | '0.3';
  /** Bindings served at the URL, preferred first. Default `["JSONRPC"]`. */
  protocolBindings?: A2AProtocolBinding[];
  /**
   * v1.0 only: also list each binding with `protocolVersion: "0.3"`, for a
   * server that answers both versions at the same URL. Default false.
   */
  legacyInterfaces?: boolean;
  /** v1.0 only: tenant clients must send on every request. */
  tenant?: string;
  /** Agent name. Default `heretek <role>`. */
  name?: string;
  /** Agent version. Default: the version of `@heretek/handoff`. */
  version?: string;
  /** Who runs the agent. */
  provider?: A2AAgentProvider;
  /** Documentation URL. */
  documentationUrl?: string;
  /** Icon URL. */
  iconUrl?: string;
  /** Protocol features; both default to false. */
  capabilities?: {
    /** The endpoint streams responses (SSE). Default false. */
    streaming?: boolean;
    /** The endpoint sends push notifications for task updates. Default false. */
    pushNotifications?: boolean;
  };
  /**
   * Declare HTTP bearer authentication (as agentgateway expects). `true` or
   * details. Default false: no security section.
   */
  bearerAuth?:
    | boolean
    | {
        /** Hint on the token format, e.g. `JWT`. */
        bearerFormat?: string;
        /** What the token is and where to get it. */
        description?: string;
      };
};

/** Options that select the v0.3 card shape. */
export type AgentCardOptionsV03 = AgentCardOptions & { protocolVersion: '0.3' };

/** Options that select the v1.0 card shape (the default). */
export type AgentCardOptionsV1 = AgentCardOptions & { protocolVersion?: '1.0' };

/**
 * The skills of a role, derived from its summary and permissions in
 * `@heretek/prefix`. Ids are `heretek.<role>.work` and
 * `heretek.<role>.handoff`: stable across versions and unique across roles.
 */
export function skillsForRole(role: RoleName): A2AAgentSkill[] {
  const definition = getRole(role);
  const mutating =
    !definition.readOnly && !isReadOnlyRole(role) && canCallMutating(role);
  const receivesMutating = canReceiveHandoff({ to: role, intent: 'mutating' });
  const permissionTag = mutating ? 'mutating' : 'read-only';
  return [
    {
      id: `heretek.${role}.work`,
      name: `${role} work`,
      description: `${definition.summary} ${
        mutating
          ? 'May call mutating tools through the heretek broker.'
          : 'Read-only: never calls a mutating tool.'
      }`,
      tags: ['heretek', role, permissionTag],
    },
    {
      id: `heretek.${role}.handoff`,
      name: `${role} handoff`,
      description: `Takes heretek handoff envelopes (${HANDOFF_MEDIA_TYPE}) addressed to ${role}: ${
        receivesMutating
          ? 'accepts intent "read-only" and "mutating".'
          : 'accepts intent "read-only" only and refuses mutating work.'
      }`,
      tags: ['heretek', role, 'handoff', permissionTag],
      inputModes: [HANDOFF_MEDIA_TYPE],
    },
  ];
}

function endpointFor(
  role: RoleName,
  options: { baseUrl?: string; url?: string },
): string {
  if (options.url !== undefined) return options.url;
  const base = new URL(options.baseUrl as string);
  base.pathname = `${base.pathname.replace(/\/+$/, '')}/${role}`;
  return base.toString();
}

const DEFAULT_INPUT_MODES = [
  'text/plain',
  'application/json',
  HANDOFF_MEDIA_TYPE,
];
const DEFAULT_OUTPUT_MODES = ['text/plain', 'application/json'];

function validate(role: string, options: unknown) {
  if (!isRoleName(role)) {
    throw new HandoffValidationError({
      code: HandoffErrorCode.UnknownRole,
      subject: 'agent card role',
      issues: [
        {
          path: 'role',
          pathSegments: ['role'],
          code: 'unknown_role',
          message: `Unknown role ${JSON.stringify(role)}: expected one of ${ROLE_NAMES.join(', ')}.`,
        },
      ],
    });
  }
  cachedOptionsSchema ??= buildOptionsSchema();
  const result = cachedOptionsSchema.safeParse(options);
  if (!result.success) {
    throw new HandoffValidationError({
      code: HandoffErrorCode.InvalidAgentCardOptions,
      subject: 'agent card options',
      issues: toHandoffIssues({
        issues: result.error.issues,
        subject: 'agent card options',
      }),
      cause: result.error,
    });
  }
  return { role, options: result.data };
}

/**
 * The A2A agent card of a role.
 *
 * By default the current (v1.0) shape: `supportedInterfaces[]` with `url`,
 * `protocolBinding` and `protocolVersion`. With `protocolVersion: "0.3"` the
 * v0.3 shape (`url`, `preferredTransport`, `additionalInterfaces`,
 * card-level `protocolVersion: "0.3.0"`) for peers that still speak 0.3.
 *
 * The card is built only from the role table and the options: no dates, no
 * paths, no environment, so the same inputs give the same card anywhere.
 *
 * @throws {@link HandoffValidationError} `UNKNOWN_ROLE` or `INVALID_AGENT_CARD_OPTIONS`.
 *
 * @example
 * ```ts
 * const card = agentCardFor('staff-backend', { baseUrl: 'https://agents.example.com/a2a' });
 * card.supportedInterfaces[0]; // { url: 'https://agents.example.com/a2a/staff-backend', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }
 * const legacy = agentCardFor('staff-backend', { baseUrl: 'https://agents.example.com/a2a', protocolVersion: '0.3' });
 * ```
 */
export function agentCardFor(
  role: string,
  options: AgentCardOptionsV03,
): AgentCardV03;
/** The v1.0 card of a role (the default shape); see the first overload. */
export function agentCardFor(
  role: string,
  options: AgentCardOptionsV1,
): AgentCardV1;
/** The v1.0 or v0.3 card of a role, as `options.protocolVersion` says; see the first overload. */
export function agentCardFor(
  role: string,
  options: AgentCardOptions,
): AgentCardV1 | AgentCardV03;
export function agentCardFor(
  role: string,
  options: AgentCardOptions,
): AgentCardV1 | AgentCardV03 {
  const { role: roleName, options: parsed } = validate(role, options);
  const definition = getRole(roleName);
  const url = endpointFor(roleName, parsed);
  const name = parsed.name ?? `heretek ${roleName}`;
  const skills = skillsForRole(roleName);
  const capabilities: A2AAgentCapabilities = {
    streaming: parsed.capabilities.streaming,
    pushNotifications: parsed.capabilities.pushNotifications,
  };
  const bearer =
    parsed.bearerAuth === false
      ? undefined
      : parsed.bearerAuth === true
        ? {}
        : parsed.bearerAuth;
  const optional = {
    ...(parsed.provider ? { provider: { ...parsed.provider } } : {}),
    ...(parsed.documentationUrl
      ? { documentationUrl: parsed.documentationUrl }
      : {}),
    ...(parsed.iconUrl ? { iconUrl: parsed.iconUrl } : {}),
  };

  if (parsed.protocolVersion === '0.3') {
    const card: AgentCardV03 = {
      protocolVersion: A2A_LEGACY_PROTOCOL_VERSION,
      name,
      description: definition.summary,
      url,
      preferredTransport: parsed.protocolBindings[0] as string,
      additionalInterfaces: parsed.protocolBindings.map((transport) => ({
        url,
        transport,
      })),
      version: parsed.version,
      ...optional,
      capabilities,
      ...(bearer
        ? {
            securitySchemes: {
              bearer: { type: 'http' as const, scheme: 'bearer', ...bearer },
            },
            security: [{ bearer: [] }],
          }
        : {}),
      defaultInputModes: [...DEFAULT_INPUT_MODES],
      defaultOutputModes: [...DEFAULT_OUTPUT_MODES],
      skills,
    };
    return card;
  }

  const tenant = parsed.tenant === undefined ? {} : { tenant: parsed.tenant };
  const supportedInterfaces: A2AAgentInterface[] = parsed.protocolBindings.map(
    (protocolBinding) => ({
      url,
      protocolBinding,
      protocolVersion: A2A_PROTOCOL_VERSION,
      ...tenant,
    }),
  );
  if (parsed.legacyInterfaces) {
    for (const protocolBinding of parsed.protocolBindings) {
      supportedInterfaces.push({
        url,
        protocolBinding,
        protocolVersion: '0.3',
        ...tenant,
      });
    }
  }
  const card: AgentCardV1 = {
    name,
    description: definition.summary,
    supportedInterfaces,
    ...optional,
    version: parsed.version,
    capabilities,
    ...(bearer
      ? {
          securitySchemes: {
            bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', ...bearer } },
          },
          securityRequirements: [{ schemes: { bearer: {} } }],
        }
      : {}),
    defaultInputModes: [...DEFAULT_INPUT_MODES],
    defaultOutputModes: [...DEFAULT_OUTPUT_MODES],
    skills,
  };
  return card;
}

/**
 * The agent cards of all six roles with the same options, keyed by role.
 * With `baseUrl`, each role gets its own endpoint; `url` is refused here
 * because six agents cannot share one exact endpoint.
 *
 * @throws {@link HandoffValidationError} like {@link agentCardFor}.
 */
export function agentCardsForAllRoles(
  options: AgentCardOptionsV03,
): Record<RoleName, AgentCardV03>;
/** The v1.0 cards of all six roles (the default shape), keyed by role; see the first overload. */
export function agentCardsForAllRoles(
  options: AgentCardOptionsV1,
): Record<RoleName, AgentCardV1>;
export function agentCardsForAllRoles(
  options: AgentCardOptions,
): Record<RoleName, AgentCardV1> | Record<RoleName, AgentCardV03> {
  if (
    typeof options === 'object' &&
    options !== null &&
    options.url !== undefined
  ) {
    throw new HandoffValidationError({
      code: HandoffErrorCode.InvalidAgentCardOptions,
      subject: 'agent card options',
      issues: [
        {
          path: 'url',
          pathSegments: ['url'],
          code: 'custom',
          message:
            'url names one endpoint; give baseUrl so each role gets its own.',
        },
      ],
    });
  }
  const cards = {} as Record<RoleName, AgentCardV1 | AgentCardV03>;
  for (const role of ROLE_NAMES) cards[role] = agentCardFor(role, options);
  return cards as Record<RoleName, AgentCardV1>;
}
