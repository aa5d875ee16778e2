import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under ESM its default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2020) => void;

/** Result of checking arguments against a tool's input schema. */
export type ArgumentCheck =
  | { ok: true }
  | { ok: false; problems: string[] }
  | { ok: 'unchecked'; reason: string };

const DRAFT_07 = /json-schema\.org\/draft-0[4-7]\/schema/;

/**
 * Validates tool arguments against the tool's JSON Schema with Ajv. MCP says a
 * schema without `$schema` is JSON Schema 2020-12; servers built on SDK v1 emit
 * draft-07, so both dialects are accepted. Compiled validators are cached per
 * schema object (catalog entries are immutable and replaced whole on discovery).
 */
export class ArgumentValidator {
  readonly #ajv2020 = withFormats(new Ajv2020({ strict: false, allErrors: true, validateFormats: true }));
  readonly #ajv07 = withFormats(new Ajv({ strict: false, allErrors: true, validateFormats: true }));
  readonly #cache = new WeakMap<object, ValidateFunction | Error>();

  /** Checks `args` against `schema`; a schema Ajv cannot compile gives `unchecked` with the reason. */
  check(schema: Record<string, unknown>, args: Record<string, unknown>): ArgumentCheck {
    let validate = this.#cache.get(schema);
    if (validate === undefined) {
      try {
        const ajv = typeof schema.$schema === 'string' && DRAFT_07.test(schema.$schema) ? this.#ajv07 : this.#ajv2020;
        validate = ajv.compile(schema);
      } catch (error) {
        validate = error instanceof Error ? error : new Error(String(error));
      }
      this.#cache.set(schema, validate);
    }
    if (validate instanceof Error) return { ok: 'unchecked', reason: validate.message };
    if (validate(args)) return { ok: true };
    return { ok: false, problems: (validate.errors ?? []).map(describeError) };
  }
}

function withFormats<T extends Ajv | Ajv2020>(ajv: T): T {
  addFormats(ajv);
  return ajv;
}

/** One agent-readable line per Ajv error, with the argument path in JSON Pointer form. */
function describeError(error: ErrorObject): string {
  const where = error.instancePath === '' ? 'arguments' : `arguments${error.instancePath}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${where}: missing required property "${String(params.missingProperty)}"`;
    case 'additionalProperties':
      return `${where}: unknown property "${String(params.additionalProperty)}" (not in the schema)`;
    case 'enum':
      return `${where}: must be one of ${JSON.stringify(params.allowedValues)}`;
    case 'type':
      return `${where}: must be ${String(params.type)}`;
    default:
      return `${where}: ${error.message ?? error.keyword}`;
  }
}
