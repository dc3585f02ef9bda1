/**
 * Checks a parsed JSON value against the small subset of JSON Schema (draft-07) that Lockstep's
 * settings schemas use: type, enum, pattern, minLength/maxLength, minimum/maximum, items,
 * minItems/maxItems, uniqueItems, properties, required and additionalProperties (false or a
 * schema), plus VS Code's `errorMessage`, which is both the editor's message and ours.
 *
 * Why not a schema library: ajv is the well-kept choice, and its standalone mode pre-compiles a
 * validator with no run-time compiler, but for `.lockstep.json` its generated code (with its
 * ucs2length helper) is 42 KB in a bundle (20 KB minified) — every guarded push loads the guard's
 * bundle — and its messages would still need mapping to ours. This interpreter is 5.8 KB (3.5 KB
 * minified), reads the very schema file the editor is given (`schemas/lockstep.schema.json`, 6 KB
 * with the messages both show), so the two cannot disagree; the rule JSON Schema cannot say
 * (heartbeat within half the lease) stays in code either way. A unit test runs ajv (a development
 * dependency only) on the same cases, so a keyword this subset read differently from JSON Schema
 * would be caught there, and a keyword it does not implement fails that test.
 *
 * Linear in the size of the value (each node is visited once; patterns are anchored and run once
 * per string), and never echoes a value: a violation names where it is and what is expected.
 */

export interface SchemaNode {
  readonly type?: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean';
  readonly enum?: readonly unknown[];
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly items?: SchemaNode;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems?: boolean;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | SchemaNode;
  readonly errorMessage?: string;
  /** Documentation only (the editor shows them). */
  readonly description?: string;
  readonly title?: string;
  readonly $schema?: string;
}

/** The first rule a value breaks: where (keys and indexes from the top) and what was expected. */
export type SchemaViolation =
  | { readonly kind: 'unknown-key'; readonly path: readonly (string | number)[]; readonly key: string; readonly known: readonly string[] }
  | { readonly kind: 'missing-key'; readonly path: readonly (string | number)[]; readonly key: string; readonly message: string }
  | { readonly kind: 'invalid'; readonly path: readonly (string | number)[]; readonly message: string };

const KEYWORDS = new Set([
  'type',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'properties',
  'required',
  'additionalProperties',
  'errorMessage',
  'description',
  'title',
  '$schema',
]);

const compiled = new WeakMap<SchemaNode, RegExp>();

function patternOf(node: SchemaNode): RegExp {
  let re = compiled.get(node);
  if (re === undefined) {
    // JSON Schema patterns are ECMA-262 regular expressions; `u` as ajv compiles them.
    re = new RegExp(node.pattern as string, 'u');
    compiled.set(node, re);
  }
  return re;
}

/** Throws when a schema uses a keyword this checker does not implement (a programming error, caught by the unit tests). */
export function assertSupportedSchema(node: SchemaNode, where = '#'): void {
  for (const key of Object.keys(node)) {
    if (!KEYWORDS.has(key)) throw new Error(`Schema keyword ${key} at ${where} is not supported by jsonSchemaCheck.`);
  }
  if (node.items) assertSupportedSchema(node.items, `${where}/items`);
  if (typeof node.additionalProperties === 'object') assertSupportedSchema(node.additionalProperties, `${where}/additionalProperties`);
  for (const [key, child] of Object.entries(node.properties ?? {})) assertSupportedSchema(child, `${where}/properties/${key}`);
}

/** The first violation of `schema` by `value` (depth first, keys in the value's order), or undefined. */
export function checkAgainstSchema(value: unknown, schema: SchemaNode): SchemaViolation | undefined {
  return check(value, schema, []);
}

function check(value: unknown, node: SchemaNode, path: (string | number)[]): SchemaViolation | undefined {
  const invalid = (fallback: string): SchemaViolation => ({ kind: 'invalid', path, message: node.errorMessage ?? fallback });
  if (node.enum !== undefined && !node.enum.some(allowed => allowed === value)) return invalid(`must be one of ${node.enum.join(', ')}`);
  switch (node.type) {
    case undefined:
      break;
    case 'string': {
      if (typeof value !== 'string') return invalid('must be a string');
      // Lengths in code points, as JSON Schema counts them.
      const length = codePoints(value);
      if (node.minLength !== undefined && length < node.minLength) return invalid(`must have at least ${node.minLength} characters`);
      if (node.maxLength !== undefined && length > node.maxLength) return invalid(`must have at most ${node.maxLength} characters`);
      if (node.pattern !== undefined && !patternOf(node).test(value)) return invalid('is not in the expected form');
      break;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return invalid('must be a number');
      if (node.type === 'integer' && !Number.isInteger(value)) return invalid('must be a whole number');
      if (node.minimum !== undefined && value < node.minimum) return invalid(`must be at least ${node.minimum}`);
      if (node.maximum !== undefined && value > node.maximum) return invalid(`must be at most ${node.maximum}`);
      break;
    }
    case 'boolean':
      if (typeof value !== 'boolean') return invalid('must be true or false');
      break;
    case 'array': {
      if (!Array.isArray(value)) return invalid('must be a list');
      if (node.minItems !== undefined && value.length < node.minItems) return invalid(`must have at least ${node.minItems} entries`);
      if (node.maxItems !== undefined && value.length > node.maxItems) return invalid(`must have at most ${node.maxItems} entries`);
      if (node.items) {
        for (let i = 0; i < value.length; i++) {
          const inner = check(value[i], node.items, [...path, i]);
          if (inner) return inner;
        }
      }
      // Scalars only (every list of Lockstep's settings holds strings): a Set is linear.
      if (
        node.uniqueItems &&
        new Set(value.map(v => (typeof v === 'object' && v !== null ? JSON.stringify(v) : `${typeof v}:${String(v)}`))).size !==
          value.length
      ) {
        return invalid('must not list an entry twice');
      }
      break;
    }
    case 'object': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid('must be a JSON object');
      const properties = node.properties ?? {};
      for (const [key, inner] of Object.entries(value)) {
        const child = Object.hasOwn(properties, key) ? properties[key] : node.additionalProperties;
        if (child === false) return { kind: 'unknown-key', path, key, known: Object.keys(properties) };
        if (child === undefined || child === true) continue;
        const violation = check(inner, child, [...path, key]);
        if (violation) return violation;
      }
      for (const key of node.required ?? []) {
        if (!Object.hasOwn(value, key)) {
          return { kind: 'missing-key', path, key, message: properties[key]?.errorMessage ?? 'is required' };
        }
      }
      break;
    }
  }
  return undefined;
}

/**
 * Code points of `text` (a lone surrogate counts as one, as ajv counts it). Counted whole: a count
 * stopped at maxLength + 1 saved little (the surrogate test reads the whole text anyway) and made a
 * string over both bounds of a schema whose minLength exceeds maxLength + 1 "too short".
 */
function codePoints(text: string): number {
  if (!/[\ud800-\udfff]/.test(text)) return text.length;
  let n = 0;
  for (const _ of text) n++;
  return n;
}
