import {
  ROLE_NAMES,
  canCallMutating,
  getRole,
  isReadOnlyRole,
  type RoleName,
} from '@heretek/prefix';
import { TARGET_NAME_RULE, targetNameProblem } from '@heretek/internal';
import { z } from 'zod';
import { describeInput, objectError } from './issues.js';

/** The envelope version this package writes and reads. */
export const HANDOFF_ENVELOPE_VERSION = 1 as const;

/**
 * Media type of a serialized (canonical JSON) handoff envelope. Agent cards
 * list it among the input modes of the roles' handoff skill.
 */
export const HANDOFF_MEDIA_TYPE = 'application/vnd.heretek.handoff.v1+json';

/**
 * Size limits of an envelope. A handoff lands in an agent's context, so it
 * stays small: a task, a summary and references, never whole files.
 */
export const HANDOFF_LIMITS = Object.freeze({
  /** Characters in `task.title` (one line). */
  titleLength: 200,
  /** Characters in `task.details`. */
  detailsLength: 20_000,
  /** Items in `task.acceptanceCriteria` and in `constraints.rules`. */
  listItems: 50,
  /** Characters in one acceptance criterion, rule or artifact description. */
  itemLength: 1_000,
  /** Characters in `contextSummary`. */
  contextSummaryLength: 32_000,
  /** Entries in `artifacts`. */
  artifacts: 256,
  /** Characters in an artifact `uri`. */
  uriLength: 2_048,
  /** Entries in `constraints.allowedTargets`. */
  targets: 64,
  /**
   * Characters of JSON text `parseHandoff` reads. Generous: the largest valid
   * envelope is about 1.1 million characters before JSON escaping.
   */
  jsonTextLength: 8_000_000,
});

const LONE_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LINE_BREAK = /[\r\n\u2028\u2029]/;

/**
 * A string that is well-formed Unicode (no lone surrogate). Lone surrogates
 * cannot be encoded as UTF-8, so two different envelopes could otherwise
 * share one digest.
 */
function text({
  min,
  max,
  singleLine = false,
  what,
}: {
  min: number;
  max: number;
  singleLine?: boolean;
  what: string;
}) {
  let schema = z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? `${what} is required.`
          : `${what} must be a string.`,
    })
    .min(min, {
      error:
        min === 1
          ? `${what} must not be empty.`
          : `${what} needs at least ${min} characters.`,
    })
    .max(max, {
      error: `${what} is longer than ${max} characters; shorten it.`,
    })
    .refine((value) => !LONE_SURROGATE.test(value), {
      error: `${what} contains a lone UTF-16 surrogate; use well-formed Unicode.`,
    });
  if (singleLine) {
    schema = schema.refine((value) => !LINE_BREAK.test(value), {
      error: `${what} must be a single line.`,
    });
  }
  return schema;
}

/** `from` or `to`: one of the six role names; a missing role is named as missing. */
function roleSchema(what: 'from' | 'to') {
  return z.enum(ROLE_NAMES, {
    error: (issue) =>
      issue.input === undefined
        ? `${what} is required: set it to one of ${ROLE_NAMES.join(', ')}.`
        : `Unknown role ${JSON.stringify(issue.input)}: expected one of ${ROLE_NAMES.join(', ')}.`,
  });
}

const DIGEST = /^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$/;

/**
 * `sha256:<64 lowercase hex>` or `sha512:<128 lowercase hex>`.
 */
const digestSchema = z
  .string({
    error: 'digest must be a string like "sha256:<64 lowercase hex digits>".',
  })
  .regex(DIGEST, {
    error:
      'digest must be "sha256:" followed by 64 lowercase hex digits (or "sha512:" and 128).',
  });

const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;
const MEDIA_TYPE =
  /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
const URI_SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]+:/;

/**
 * True for a workspace-relative POSIX path (`src/a.ts`, no leading `/`, no
 * `.` or `..` segment, no backslash, no drive letter) or an absolute URI with a scheme of two
 * or more characters (`https://...`, `file:///...`, `git+ssh://...`). A
 * Windows drive path (`C:\x`) is neither.
 */
export function isArtifactUri(value: string): boolean {
  if (URI_SCHEME.test(value)) {
    return URL.canParse(value) && !/\s/.test(value);
  }
  if (
    value.startsWith('/') ||
    /^[A-Za-z]:/.test(value) ||
    value.includes('\\') ||
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f]/.test(value)
  ) {
    return false;
  }
  const segments = value.split('/');
  return segments.every(
    (segment) => segment !== '' && segment !== '.' && segment !== '..',
  );
}

const artifactSchema = z.strictObject(
  {
    /** Short human name of the artifact, e.g. `failing test`. */
    name: text({ min: 1, max: 200, singleLine: true, what: 'artifact name' }),
    /** Where the artifact is: a workspace-relative POSIX path or an absolute URI. */
    uri: text({
      min: 1,
      max: HANDOFF_LIMITS.uriLength,
      singleLine: true,
      what: 'artifact uri',
    }).refine(isArtifactUri, {
      error:
        'artifact uri must be a workspace-relative POSIX path (no leading "/", no "." or ".." segments, no backslashes) or an absolute URI such as https://... or file:///...',
    }),
    /** Digest of the artifact's bytes. */
    digest: digestSchema,
    /** Media type, e.g. `text/x-typescript`. */
    mediaType: z
      .string({ error: 'artifact mediaType must be a string.' })
      .regex(MEDIA_TYPE, {
        error:
          'artifact mediaType must be a lowercase type/subtype such as "text/plain".',
      })
      .optional(),
    /** Size in bytes. */
    sizeBytes: z
      .number({ error: 'artifact sizeBytes must be a number.' })
      .int({ error: 'artifact sizeBytes must be a whole number.' })
      .min(0, { error: 'artifact sizeBytes must not be negative.' })
      .max(Number.MAX_SAFE_INTEGER, {
        error: 'artifact sizeBytes is too large.',
      })
      .optional(),
    /** One line on why the recipient should look at it. */
    description: text({
      min: 1,
      max: HANDOFF_LIMITS.itemLength,
      what: 'artifact description',
    }).optional(),
  },
  { error: objectError('artifact') },
);

const constraintsSchema = z.strictObject(
  {
    /** Free-form rules the recipient must follow, e.g. `do not touch the public API`. */
    rules: z
      .array(text({ min: 1, max: HANDOFF_LIMITS.itemLength, what: 'rule' }), {
        error: 'constraints.rules must be an array of strings.',
      })
      .max(HANDOFF_LIMITS.listItems, {
        error: `constraints.rules has more than ${HANDOFF_LIMITS.listItems} items.`,
      })
      .default([]),
    /**
     * Gateway targets (backends) the recipient may use, e.g. `["ghidra", "core"]`.
     * Absent means no narrowing beyond the recipient's profile.
     */
    allowedTargets: z
      .array(
        z
          .string({ error: 'target must be a string.' })
          .superRefine((target, context) => {
            const problem = targetNameProblem(target);
            if (problem !== undefined)
              context.addIssue({
                code: 'custom',
                message: `${JSON.stringify(target)} is not a gateway target name: ${problem}. A target name is ${TARGET_NAME_RULE}.`,
              });
          }),
        { error: 'constraints.allowedTargets must be an array of strings.' },
      )
      .max(HANDOFF_LIMITS.targets, {
        error: `constraints.allowedTargets has more than ${HANDOFF_LIMITS.targets} items.`,
      })
      .refine((targets) => new Set(targets).size === targets.length, {
        error:
          'constraints.allowedTargets lists a target twice; list each once.',
      })
      .optional(),
    /** Upper bound on the tool calls the recipient should spend. */
    maxToolCalls: z
      .number({ error: 'constraints.maxToolCalls must be a number.' })
      .int({ error: 'constraints.maxToolCalls must be a whole number.' })
      .min(1, { error: 'constraints.maxToolCalls must be at least 1.' })
      .max(1_000_000, {
        error: 'constraints.maxToolCalls must be at most 1000000.',
      })
      .optional(),
    /** When the result is due (RFC 3339, UTC, `Z`). */
    deadline: z.iso
      .datetime({
        error:
          'constraints.deadline must be an RFC 3339 UTC timestamp like 2026-01-31T12:00:00Z.',
      })
      .optional(),
  },
  { error: objectError('constraints') },
);

const taskSchema = z.strictObject(
  {
    /** One line saying what to do. */
    title: text({
      min: 1,
      max: HANDOFF_LIMITS.titleLength,
      singleLine: true,
      what: 'task.title',
    }),
    /** The full instructions. */
    details: text({
      min: 0,
      max: HANDOFF_LIMITS.detailsLength,
      what: 'task.details',
    }).default(''),
    /** Checks that tell the recipient it is done. */
    acceptanceCriteria: z
      .array(
        text({
          min: 1,
          max: HANDOFF_LIMITS.itemLength,
          what: 'acceptance criterion',
        }),
        {
          error: 'task.acceptanceCriteria must be an array of strings.',
        },
      )
      .max(HANDOFF_LIMITS.listItems, {
        error: `task.acceptanceCriteria has more than ${HANDOFF_LIMITS.listItems} items.`,
      })
      .default([]),
  },
  { error: objectError('task') },
);

function buildEnvelopeSchema() {
  return z.strictObject(
    {
      /** Envelope format version; always {@link HANDOFF_ENVELOPE_VERSION}. */
      version: z.literal(HANDOFF_ENVELOPE_VERSION, {
        error: (issue) =>
          issue.input === undefined
            ? `version is required: set it to the number ${HANDOFF_ENVELOPE_VERSION}.`
            : `version must be the number ${HANDOFF_ENVELOPE_VERSION}, not ${JSON.stringify(issue.input) ?? describeInput(issue.input)}.`,
      }),
      /** W3C trace-context trace id: 32 lowercase hex digits, not all zero. */
      traceId: z
        .string({ error: 'traceId must be a string.' })
        .regex(TRACE_ID, {
          error:
            'traceId must be a W3C trace id: 32 lowercase hex digits, not all zero.',
        }),
      /** When the envelope was created (RFC 3339, UTC, `Z`). */
      createdAt: z.iso.datetime({
        error:
          'createdAt must be an RFC 3339 UTC timestamp like 2026-01-31T12:00:00.000Z.',
      }),
      /** The role handing the work over. */
      from: roleSchema('from'),
      /** The role receiving the work. */
      to: roleSchema('to'),
      /**
       * Whether the recipient is asked to change anything. `mutating` may only
       * go to a role that can call mutating tools.
       */
      intent: z.enum(['read-only', 'mutating'], {
        error: 'intent must be "read-only" or "mutating".',
      }),
      /** What to do. */
      task: taskSchema,
      /** What the recipient needs to know that is not in the task. */
      contextSummary: text({
        min: 0,
        max: HANDOFF_LIMITS.contextSummaryLength,
        what: 'contextSummary',
      }),
      /** Files, logs and other outputs the recipient should look at. */
      artifacts: z
        .array(artifactSchema, { error: 'artifacts must be an array.' })
        .max(HANDOFF_LIMITS.artifacts, {
          error: `artifacts has more than ${HANDOFF_LIMITS.artifacts} entries.`,
        })
        .superRefine((artifacts, context) => {
          const seen = new Set<string>();
          artifacts.forEach((artifact, index) => {
            if (seen.has(artifact.uri)) {
              context.addIssue({
                code: 'custom',
                path: [index, 'uri'],
                message: `artifact uri ${JSON.stringify(artifact.uri)} appears twice; list each artifact once.`,
              });
            }
            seen.add(artifact.uri);
          });
        })
        .default([]),
      /** Limits the recipient must respect. */
      constraints: constraintsSchema.default({ rules: [] }),
      /** Digest of the envelope this one answers or continues, if any. */
      parentDigest: digestSchema.optional(),
    },
    { error: objectError('the handoff envelope') },
  );
}

/**
 * True when `to` may receive work with the given intent: any role may receive
 * read-only work; mutating work only goes to a role that is not read-only,
 * may call mutating tools and may receive mutating work (all three, from the
 * role table of `@heretek/prefix`). Throws `UnknownRoleError` (from
 * `@heretek/prefix`) for an unknown role.
 */
export function canReceiveHandoff({
  to,
  intent,
}: {
  to: string;
  intent: 'read-only' | 'mutating';
}): boolean {
  const role = getRole(to); // unknown roles throw
  if (intent === 'read-only') return true;
  return (
    !role.readOnly &&
    !isReadOnlyRole(to) &&
    canCallMutating(to) &&
    role.permissions.canReceiveMutatingWork === true
  );
}

let cachedShape: z.ZodType<HandoffEnvelope, HandoffEnvelopeInput> | undefined;
let cachedSchema: z.ZodType<HandoffEnvelope, HandoffEnvelopeInput> | undefined;

/**
 * The envelope shape without the read-only recipient policy; `parseHandoff`
 * applies the policy itself so it can throw its own error type.
 *
 * @internal
 */
export function handoffEnvelopeShape(): z.ZodType<
  HandoffEnvelope,
  HandoffEnvelopeInput
> {
  cachedShape ??= buildEnvelopeSchema();
  return cachedShape;
}

/**
 * The zod schema of a handoff envelope (version 1), including the role
 * policy: intent `mutating` addressed to a read-only role is an issue at
 * `intent`. Built on first use. Use it to embed envelopes in larger schemas;
 * `parseHandoff` gives typed errors instead of zod issues.
 */
export function handoffEnvelopeSchema(): z.ZodType<
  HandoffEnvelope,
  HandoffEnvelopeInput
> {
  cachedSchema ??= handoffEnvelopeShape().superRefine((envelope, context) => {
    if (!canReceiveHandoff({ to: envelope.to, intent: envelope.intent })) {
      context.addIssue({
        code: 'custom',
        path: ['intent'],
        message: `${JSON.stringify(envelope.to)} is a read-only role and cannot take intent "mutating".`,
      });
    }
  });
  return cachedSchema;
}

/** `read-only` or `mutating`: whether the recipient is asked to change anything. */
export type HandoffIntent = 'read-only' | 'mutating';

/** What to do. */
export type HandoffTask = {
  /** One line saying what to do (1-200 characters). */
  title: string;
  /** The full instructions (up to 20 000 characters; empty when absent). */
  details: string;
  /** Checks that tell the recipient it is done (up to 50). */
  acceptanceCriteria: string[];
};

/** One artifact the recipient should look at, pinned by digest. */
export type HandoffArtifact = {
  /** Short human name, one line. */
  name: string;
  /** Workspace-relative POSIX path or absolute URI; see {@link isArtifactUri}. Unique within an envelope. */
  uri: string;
  /** `sha256:<64 hex>` or `sha512:<128 hex>` of the artifact's bytes. */
  digest: string;
  /** Media type such as `text/plain`. */
  mediaType?: string;
  /** Size in bytes. */
  sizeBytes?: number;
  /** Why the recipient should look at it. */
  description?: string;
};

/** Limits the recipient must respect. */
export type HandoffConstraints = {
  /** Free-form rules, e.g. `do not touch the public API` (up to 50). */
  rules: string[];
  /** Gateway targets the recipient may use; absent means no narrowing. */
  allowedTargets?: string[];
  /** Upper bound on tool calls. */
  maxToolCalls?: number;
  /** When the result is due (RFC 3339 UTC). */
  deadline?: string;
};

/** A parsed, valid handoff envelope (version 1, defaults filled in). */
export type HandoffEnvelope = {
  /** Envelope format version: {@link HANDOFF_ENVELOPE_VERSION}. */
  version: typeof HANDOFF_ENVELOPE_VERSION;
  /** W3C trace-context trace id: 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** Creation time, RFC 3339 UTC (`Z`). */
  createdAt: string;
  /** The role handing the work over. */
  from: RoleName;
  /** The role receiving the work. */
  to: RoleName;
  /** Whether the recipient is asked to change anything; `mutating` never goes to a read-only role. */
  intent: HandoffIntent;
  /** What to do. */
  task: HandoffTask;
  /** What the recipient needs to know that is not in the task (may be empty). */
  contextSummary: string;
  /** Artifacts, in the sender's order. */
  artifacts: HandoffArtifact[];
  /** Limits the recipient must respect. */
  constraints: HandoffConstraints;
  /** Digest of the envelope this one answers or continues. */
  parentDigest?: string;
};

/**
 * What the envelope schema accepts: a {@link HandoffEnvelope} in which
 * `task.details`, `task.acceptanceCriteria`, `artifacts`, `constraints` and
 * `constraints.rules` may be left out (they default to empty).
 */
export type HandoffEnvelopeInput = Omit<
  HandoffEnvelope,
  'task' | 'artifacts' | 'constraints'
> & {
  task: Pick<HandoffTask, 'title'> & Partial<Omit<HandoffTask, 'title'>>;
  artifacts?: HandoffArtifact[];
  constraints?: Omit<HandoffConstraints, 'rules'> & { rules?: string[] };
};
