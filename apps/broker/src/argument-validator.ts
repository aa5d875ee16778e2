import {
  Ajv,
  type ErrorObject,
  type Options,
  type ValidateFunction,
} from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under ESM its default export is the plugin function.
const addFormats: (ajv: Ajv) => unknown = addFormatsModule;

/** Result of checking arguments against a tool's input schema. */
export type ArgumentCheck =
  | { ok: true }
  | { ok: false; problems: string[] }
  | { ok: 'unchecked'; reason: string };

// Schemas come from untrusted servers: never register them by `$id` (a second
// schema, or the same tool after re-discovery, would clash), never fail on
// unknown keywords.
const OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateFormats: true,
  addUsedSchema: false,
};

const DRAFT_04_TO_07 = /json-schema\.org\/draft-0[4-7]\/schema/;
const DRAFT_2019_09 = /json-schema\.org\/draft\/2019-09\/schema/;

/**
 * Validates tool arguments with Ajv, each `$schema` dialect by the class that speaks it (none:
 * 2020-12, as MCP says; draft-04/06 as draft-07). Validators are cached per schema object,
 * which is immutable and collected with its catalog entry.
 */
export class ArgumentValidator {
  readonly #ajv2020 = withFormats(new Ajv2020(OPTIONS));
  readonly #ajv2019 = withFormats(new Ajv2019(OPTIONS));
  readonly #ajv07 = withFormats(new Ajv(OPTIONS));
  readonly #cache = new WeakMap<object, ValidateFunction | Error>();

  /** Checks `args` against `schema`; a schema Ajv cannot compile gives `unchecked` with the reason. */
  check(
    schema: Record<string, unknown>,
    args: Record<string, unknown>,
  ): ArgumentCheck {
    let validate = this.#cache.get(schema);
    if (validate === undefined) {
      validate = this.#compile(schema);
      this.#cache.set(schema, validate);
    }
    if (validate instanceof Error)
      return { ok: 'unchecked', reason: validate.message };
    if (validate(args)) return { ok: true };
    return { ok: false, problems: (validate.errors ?? []).map(describeError) };
  }

  #compile(schema: Record<string, unknown>): ValidateFunction | Error {
    try {
      const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
      if (DRAFT_04_TO_07.test(dialect)) {
        // Ajv's draft-07 class has no draft-04/06 meta-schema; drop the marker, keep the keywords.
        const { $schema: _dialect, ...rest } = schema;
        return this.#ajv07.compile(/draft-07/.test(dialect) ? schema : rest);
      }
      if (DRAFT_2019_09.test(dialect)) return this.#ajv2019.compile(schema);
      return this.#ajv2020.compile(schema);
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }
}

function withFormats<T extends Ajv>(ajv: T): T {
  addFormats(ajv);
  return ajv;
}

/** One agent-readable line per Ajv error, with the argument path in JSON Pointer form. */
function describeError(error: ErrorObject): string {
  const where =
    error.instancePath === '' ? 'arguments' : `arguments${error.instancePath}`;
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
