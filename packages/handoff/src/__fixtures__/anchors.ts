import { readFileSync } from 'node:fs';

/**
 * The A2A specification files the conformance tests check against, copied
 * into `./a2a/` with their licence and source (see `./a2a/SOURCE.md`).
 */
const A2A_FIXTURES = new URL('./a2a/', import.meta.url);

/** Text of one A2A specification file. */
export function readAnchor(
  name: 'a2a.proto' | 'a2a.v0.3.0.schema.json',
): string {
  return readFileSync(new URL(name, A2A_FIXTURES), 'utf8');
}

/** One field of a proto message. */
export type ProtoField = {
  /** snake_case name as written in the .proto. */
  name: string;
  /** lowerCamelCase proto-JSON name. */
  jsonName: string;
  type: string;
  repeated: boolean;
  required: boolean;
};

/**
 * The fields of the top-level `message <name> { ... }` in proto text, with
 * `REQUIRED` taken from `(google.api.field_behavior) = REQUIRED`.
 */
export function protoMessageFields(
  proto: string,
  message: string,
): ProtoField[] {
  const start = proto.search(new RegExp(`^message ${message} \\{`, 'm'));
  if (start < 0) throw new Error(`message ${message} not in proto`);
  let depth = 0;
  let end = start;
  for (let i = proto.indexOf('{', start); i < proto.length; i++) {
    if (proto[i] === '{') depth++;
    else if (proto[i] === '}' && --depth === 0) {
      end = i;
      break;
    }
  }
  const body = proto.slice(proto.indexOf('{', start) + 1, end);
  const fields: ProtoField[] = [];
  const fieldLine =
    /^\s*(optional\s+|repeated\s+)?(map<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*\d+\s*(\[[^\]]*\])?\s*;/gm;
  for (const match of body.replace(/\/\/.*$/gm, '').matchAll(fieldLine)) {
    const [, modifier, type, name, options] = match;
    if (type === undefined || name === undefined) continue;
    fields.push({
      name,
      jsonName: name.replace(/_([a-z0-9])/g, (_m, c: string) =>
        c.toUpperCase(),
      ),
      type,
      repeated: modifier?.trim() === 'repeated' || type.startsWith('map<'),
      required: /field_behavior\)\s*=\s*REQUIRED/.test(options ?? ''),
    });
  }
  return fields;
}
