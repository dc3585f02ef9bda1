import * as assert from 'node:assert/strict';
import Ajv from 'ajv';
import { assertSupportedSchema, checkAgainstSchema, type SchemaNode, type SchemaViolation } from '../../src/core/jsonSchemaCheck';

/**
 * The settings schemas' checker (jsonSchemaCheck.ts), keyword by keyword, each bound on both sides,
 * with the exact violation a user's message is built from (its kind, path and text). Every case
 * runs through ajv too, so the checker and JSON Schema judge each value alike. Two ajv options
 * read a JavaScript value as the JSON it stands for, as the checker does: `strictNumbers` refuses
 * NaN and Infinity (JSON has neither), `ownProperties` does not count an inherited name such as
 * `toString` as a key the object has (by default ajv's `required` does).
 * test/unit/containerSchema.test.ts does the same for `.lockstep.json`'s own schema.
 *
 * Each test clones its schema: the checker caches a compiled pattern per schema node, so a fresh
 * node is what makes a test compile its pattern itself.
 */

const ajv = new Ajv({ strict: false, strictNumbers: true, ownProperties: true });

type Case = readonly [label: string, schema: SchemaNode, value: unknown, expected: SchemaViolation | undefined];

const invalid = (message: string, path: (string | number)[] = []): SchemaViolation => ({ kind: 'invalid', path, message });

const CASES: readonly Case[] = [
  // No type: anything goes (a key that is only documented).
  ['no keyword, a number', {}, 1, undefined],
  ['no keyword, a string', {}, 'x', undefined],
  ['no keyword, null', {}, null, undefined],

  // enum: strict equality, and the allowed values named in the message.
  ['enum, an allowed value', { enum: ['a', 'b'] }, 'b', undefined],
  ['enum, another value', { enum: ['a', 'b'] }, 'c', invalid('must be one of a, b')],
  ['enum, the same text as a number', { enum: [1] }, '1', invalid('must be one of 1')],
  ['enum with errorMessage', { enum: ['a'], errorMessage: 'pick a' }, 'x', invalid('pick a')],
  ['enum before type', { type: 'string', enum: ['a'] }, 2, invalid('must be one of a')],

  // string
  ['string, a string', { type: 'string' }, '', undefined],
  ['string, a number', { type: 'string' }, 1, invalid('must be a string')],
  ['string, null', { type: 'string' }, null, invalid('must be a string')],
  ['string with errorMessage, a number', { type: 'string', errorMessage: 'a name' }, 1, invalid('a name')],
  ['minLength alone, at the bound', { type: 'string', minLength: 2 }, 'ab', undefined],
  ['minLength alone, one under', { type: 'string', minLength: 2 }, 'a', invalid('must have at least 2 characters')],
  ['maxLength alone, at the bound', { type: 'string', maxLength: 3 }, 'abc', undefined],
  ['maxLength alone, one over', { type: 'string', maxLength: 3 }, 'abcd', invalid('must have at most 3 characters')],
  ['maxLength alone, far over', { type: 'string', maxLength: 3 }, 'x'.repeat(50), invalid('must have at most 3 characters')],
  ['both lengths, between', { type: 'string', minLength: 1, maxLength: 2 }, 'ab', undefined],
  ['both lengths, under', { type: 'string', minLength: 1, maxLength: 2 }, '', invalid('must have at least 1 characters')],
  ['both lengths, over', { type: 'string', minLength: 1, maxLength: 2 }, 'abc', invalid('must have at most 2 characters')],
  ['length with errorMessage', { type: 'string', maxLength: 1, errorMessage: 'one letter' }, 'ab', invalid('one letter')],
  // Lengths in code points: an emoji is one character (two UTF-16 units).
  ['maxLength 1, one emoji', { type: 'string', maxLength: 1 }, '\u{1f600}', undefined],
  ['maxLength 1, two emoji', { type: 'string', maxLength: 1 }, '\u{1f600}\u{1f600}', invalid('must have at most 1 characters')],
  ['minLength 2, one emoji', { type: 'string', minLength: 2 }, '\u{1f600}', invalid('must have at least 2 characters')],
  ['minLength 2, two emoji', { type: 'string', minLength: 2 }, '\u{1f600}\u{1f600}', undefined],
  ['minLength 2, a letter and an emoji', { type: 'string', minLength: 2 }, 'a\u{1f600}', undefined],
  ['minLength 3, a letter and an emoji', { type: 'string', minLength: 3 }, 'a\u{1f600}', invalid('must have at least 3 characters')],
  ['maxLength 2, a letter and an emoji', { type: 'string', maxLength: 2 }, 'a\u{1f600}', undefined],
  [
    'maxLength 3, five characters with an emoji',
    { type: 'string', maxLength: 3 },
    'ab\u{1f600}cd',
    invalid('must have at most 3 characters'),
  ],
  ['a lone surrogate is one character', { type: 'string', maxLength: 1 }, '\ud800', undefined],
  ['a lone surrogate is not two', { type: 'string', minLength: 2 }, '\udfff', invalid('must have at least 2 characters')],
  // A schema that accepts no string: a text over both bounds is too long, not "too short".
  [
    'minLength over maxLength, a long text',
    { type: 'string', minLength: 5, maxLength: 2 },
    'abcdef',
    invalid('must have at most 2 characters'),
  ],
  [
    'minLength over maxLength, a long text of emoji',
    { type: 'string', minLength: 5, maxLength: 2 },
    '\u{1f600}'.repeat(6),
    invalid('must have at most 2 characters'),
  ],
  [
    'minLength over maxLength, a short text',
    { type: 'string', minLength: 5, maxLength: 2 },
    'abc',
    invalid('must have at least 5 characters'),
  ],
  ['pattern, a match', { type: 'string', pattern: '^[a-z]+$' }, 'abc', undefined],
  ['pattern, no match', { type: 'string', pattern: '^[a-z]+$' }, 'ab1', invalid('is not in the expected form')],
  ['pattern, after the lengths', { type: 'string', maxLength: 2, pattern: '^[a-z]+$' }, 'ab1', invalid('must have at most 2 characters')],
  // Patterns are Unicode-aware (the `u` flag), as ajv compiles them.
  ['a Unicode pattern, one emoji is one character', { type: 'string', pattern: '^.$' }, '\u{1f600}', undefined],
  ['a Unicode property escape', { type: 'string', pattern: '^\\p{Lu}+$' }, 'ÄB', undefined],
  ['a Unicode property escape, no match', { type: 'string', pattern: '^\\p{Lu}+$' }, 'p', invalid('is not in the expected form')],

  // number and integer
  ['number, a fraction', { type: 'number' }, 1.5, undefined],
  ['number, a numeric string', { type: 'number' }, '1', invalid('must be a number')],
  ['number, null', { type: 'number' }, null, invalid('must be a number')],
  ['number, NaN', { type: 'number' }, Number.NaN, invalid('must be a number')],
  ['number, Infinity', { type: 'number' }, Number.POSITIVE_INFINITY, invalid('must be a number')],
  ['integer, NaN', { type: 'integer' }, Number.NaN, invalid('must be a number')],
  ['integer, a fraction', { type: 'integer' }, 1.5, invalid('must be a whole number')],
  ['integer, a whole number written with a point', { type: 'integer' }, 2.0, undefined],
  ['integer, a string', { type: 'integer' }, '2', invalid('must be a number')],
  ['minimum, at the bound', { type: 'integer', minimum: 5 }, 5, undefined],
  ['minimum, one under', { type: 'integer', minimum: 5 }, 4, invalid('must be at least 5')],
  ['minimum, a fraction under', { type: 'number', minimum: 5 }, 4.5, invalid('must be at least 5')],
  ['maximum, at the bound', { type: 'integer', maximum: 600 }, 600, undefined],
  ['maximum, one over', { type: 'integer', maximum: 600 }, 601, invalid('must be at most 600')],
  ['both bounds, a negative under', { type: 'number', minimum: -1, maximum: 1 }, -2, invalid('must be at least -1')],
  ['a bound with errorMessage', { type: 'integer', minimum: 5, errorMessage: '5 or more' }, 4, invalid('5 or more')],

  // boolean
  ['boolean, false', { type: 'boolean' }, false, undefined],
  ['boolean, the string true', { type: 'boolean' }, 'true', invalid('must be true or false')],
  ['boolean, 1', { type: 'boolean' }, 1, invalid('must be true or false')],

  // array
  ['array, empty', { type: 'array' }, [], undefined],
  ['array without items, any entries', { type: 'array' }, ['x', 1, null], undefined],
  ['array, an object', { type: 'array' }, { 0: 'x' }, invalid('must be a list')],
  ['array, a string', { type: 'array' }, 'x', invalid('must be a list')],
  ['minItems, at the bound', { type: 'array', minItems: 1 }, ['a'], undefined],
  ['minItems, one under', { type: 'array', minItems: 1 }, [], invalid('must have at least 1 entries')],
  ['maxItems, at the bound', { type: 'array', maxItems: 2 }, [1, 2], undefined],
  ['maxItems, one over', { type: 'array', maxItems: 2 }, [1, 2, 3], invalid('must have at most 2 entries')],
  ['items, every entry matches', { type: 'array', items: { type: 'string' } }, ['a', 'b'], undefined],
  ['items, the second entry', { type: 'array', items: { type: 'string' } }, ['a', 2, 3], invalid('must be a string', [1])],
  ['items, the first entry', { type: 'array', items: { type: 'string' } }, [1, 'b'], invalid('must be a string', [0])],
  ['items before uniqueItems', { type: 'array', uniqueItems: true, items: { type: 'string' } }, [1, 1], invalid('must be a string', [0])],
  ['uniqueItems, distinct strings', { type: 'array', uniqueItems: true }, ['a', 'b'], undefined],
  ['uniqueItems, a string twice', { type: 'array', uniqueItems: true }, ['a', 'b', 'a'], invalid('must not list an entry twice')],
  ['uniqueItems, a number and its text', { type: 'array', uniqueItems: true }, [1, '1'], undefined],
  ['uniqueItems, null and its text', { type: 'array', uniqueItems: true }, [null, 'null'], undefined],
  ['uniqueItems, true and its text', { type: 'array', uniqueItems: true }, [true, 'true'], undefined],
  ['uniqueItems, null twice', { type: 'array', uniqueItems: true }, [null, null], invalid('must not list an entry twice')],
  ['uniqueItems, two different objects', { type: 'array', uniqueItems: true }, [{ a: 1 }, { b: 2 }], undefined],
  ['uniqueItems, an object twice', { type: 'array', uniqueItems: true }, [{ a: 1 }, { a: 1 }], invalid('must not list an entry twice')],
  [
    'uniqueItems, two different lists',
    { type: 'array', uniqueItems: true },
    [
      [1, 2],
      ['1', 2],
    ],
    undefined,
  ],
  ['uniqueItems, an object and its text', { type: 'array', uniqueItems: true }, [{}, '[object Object]'], undefined],
  ['no uniqueItems, a string twice', { type: 'array' }, ['a', 'a'], undefined],
  ['uniqueItems false, a string twice', { type: 'array', uniqueItems: false }, ['a', 'a'], undefined],

  // object
  ['object, empty', { type: 'object' }, {}, undefined],
  ['object, null', { type: 'object' }, null, invalid('must be a JSON object')],
  ['object, a list', { type: 'object' }, [], invalid('must be a JSON object')],
  ['object, a string', { type: 'object' }, 'ab', invalid('must be a JSON object')],
  ['object, a number', { type: 'object' }, 1, invalid('must be a JSON object')],
  ['object with errorMessage, null', { type: 'object', errorMessage: 'a table' }, null, invalid('a table')],
  ['object without properties, any keys', { type: 'object' }, { a: 1, b: 'x' }, undefined],
  ['a key no property names, without additionalProperties', { type: 'object', properties: { a: { type: 'string' } } }, { b: 1 }, undefined],
  [
    'a key no property names, additionalProperties true',
    { type: 'object', properties: { a: {} }, additionalProperties: true },
    { b: 1 },
    undefined,
  ],
  [
    'a key no property names, additionalProperties false',
    { type: 'object', properties: { a: {}, b: {} }, additionalProperties: false },
    { a: 1, c: 1 },
    { kind: 'unknown-key', path: [], key: 'c', known: ['a', 'b'] },
  ],
  [
    "an Object.prototype method's name is no property",
    { type: 'object', properties: { a: {} }, additionalProperties: false },
    { toString: 1 },
    { kind: 'unknown-key', path: [], key: 'toString', known: ['a'] },
  ],
  [
    'additionalProperties false without properties',
    { type: 'object', additionalProperties: false },
    { a: 1 },
    { kind: 'unknown-key', path: [], key: 'a', known: [] },
  ],
  ['additionalProperties as a schema, a match', { type: 'object', additionalProperties: { type: 'number' } }, { x: 1, y: 2 }, undefined],
  [
    'additionalProperties as a schema, no match',
    { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } },
    { a: 'ok', x: 'no' },
    invalid('must be a number', ['x']),
  ],
  ['a property, a match', { type: 'object', properties: { a: { type: 'integer', minimum: 1 } } }, { a: 1 }, undefined],
  [
    'a property, no match',
    { type: 'object', properties: { a: { type: 'integer', minimum: 1 } } },
    { a: 0 },
    invalid('must be at least 1', ['a']),
  ],
  [
    "the first violation in the value's key order",
    { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } },
    { b: 1, a: 2 },
    invalid('must be a string', ['b']),
  ],
  [
    'nested: a list in an object in an object',
    {
      type: 'object',
      properties: { outer: { type: 'object', properties: { list: { type: 'array', items: { type: 'string', maxLength: 1 } } } } },
    },
    { outer: { list: ['a', 'bc'] } },
    invalid('must have at most 1 characters', ['outer', 'list', 1]),
  ],
  [
    'nested: an unknown key deep down',
    { type: 'object', properties: { outer: { type: 'object', properties: { a: {} }, additionalProperties: false } } },
    { outer: { b: 1 } },
    { kind: 'unknown-key', path: ['outer'], key: 'b', known: ['a'] },
  ],
  ['required, present', { type: 'object', properties: { a: {} }, required: ['a'] }, { a: null }, undefined],
  [
    'required, missing',
    { type: 'object', properties: { a: {} }, required: ['a'] },
    {},
    { kind: 'missing-key', path: [], key: 'a', message: 'is required' },
  ],
  [
    "required, missing, with the property's errorMessage",
    { type: 'object', properties: { a: { type: 'string', errorMessage: 'names the thing' } }, required: ['a'] },
    {},
    { kind: 'missing-key', path: [], key: 'a', message: 'names the thing' },
  ],
  [
    'required, missing, no property describes it',
    { type: 'object', required: ['a'] },
    { b: 1 },
    { kind: 'missing-key', path: [], key: 'a', message: 'is required' },
  ],
  [
    'required, the first missing one',
    { type: 'object', required: ['a', 'b', 'c'] },
    { a: 1 },
    { kind: 'missing-key', path: [], key: 'b', message: 'is required' },
  ],
  [
    'a bad value before a missing key',
    { type: 'object', properties: { a: { type: 'string' } }, required: ['b'] },
    { a: 1 },
    invalid('must be a string', ['a']),
  ],
  [
    'required, missing, nested',
    { type: 'object', properties: { inner: { type: 'object', required: ['x'] } } },
    { inner: {} },
    { kind: 'missing-key', path: ['inner'], key: 'x', message: 'is required' },
  ],
  [
    'required, an inherited name is not present',
    { type: 'object', required: ['toString'] },
    {},
    { kind: 'missing-key', path: [], key: 'toString', message: 'is required' },
  ],
];

describe('jsonSchemaCheck: every keyword, both sides, as ajv judges it', () => {
  // ajv's first compile loads and compiles its code generator (about 100 ms of CPU, more on a busy
  // machine): a cost of the suite, not of whichever case happens to come first.
  before(() => ajv.validate({ type: 'object', properties: { a: { type: 'string', pattern: '^a' } } }, { a: 'a' }));
  for (const [label, schema, value, expected] of CASES) {
    it(`${label}: ${expected === undefined ? 'accepted' : `${expected.kind} at [${expected.path.join(', ')}]`}`, () => {
      const node = structuredClone(schema);
      assert.deepEqual(checkAgainstSchema(value, node), expected);
      assert.equal(checkAgainstSchema(value, node) === undefined, expected === undefined, 'the same answer the second time');
      assert.equal(ajv.validate(structuredClone(schema), value), expected === undefined, `ajv: ${ajv.errorsText()}`);
    });
  }

  it('never echoes the value in a message', () => {
    const secret = 'redis://:hunter2@cache';
    const schema: SchemaNode = {
      type: 'object',
      properties: { url: { type: 'string', pattern: '^redis://[^:@]*$', maxLength: 10 }, list: { type: 'array', uniqueItems: true } },
      additionalProperties: false,
    };
    for (const value of [{ url: secret }, { url: `${secret}xx` }, { list: [secret, secret] }, { url: 1, [secret]: 1 }]) {
      const violation = checkAgainstSchema(value, structuredClone(schema));
      assert.ok(violation !== undefined && violation.kind === 'invalid');
      assert.ok(!JSON.stringify(violation).includes('hunter2'), JSON.stringify(violation));
    }
  });
});

describe('jsonSchemaCheck: a schema with a keyword it does not implement is refused', () => {
  it('accepts schemas that use only its keywords, at every depth', () => {
    for (const schema of [
      {},
      { type: 'string', minLength: 1, maxLength: 2, pattern: 'x', enum: ['x'], errorMessage: 'm', description: 'd', title: 't' },
      { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', required: ['a'], additionalProperties: false },
      { type: 'array', minItems: 1, maxItems: 2, uniqueItems: true, items: { type: 'integer', minimum: 0, maximum: 1 } },
      { type: 'object', properties: { a: { type: 'boolean' } }, additionalProperties: { type: 'number' } },
    ] as SchemaNode[]) {
      assert.doesNotThrow(() => assertSupportedSchema(schema));
    }
  });

  for (const [label, schema, message] of [
    ['at the top', { type: 'string', format: 'uri' }, 'Schema keyword format at # is not supported by jsonSchemaCheck.'],
    ['in items', { type: 'array', items: { const: 1 } }, 'Schema keyword const at #/items is not supported by jsonSchemaCheck.'],
    [
      'in additionalProperties',
      { type: 'object', additionalProperties: { oneOf: [] } },
      'Schema keyword oneOf at #/additionalProperties is not supported by jsonSchemaCheck.',
    ],
    [
      'in a property',
      { type: 'object', properties: { a: {}, b: { exclusiveMinimum: 0 } } },
      'Schema keyword exclusiveMinimum at #/properties/b is not supported by jsonSchemaCheck.',
    ],
    [
      'deep down',
      { type: 'object', properties: { a: { type: 'array', items: { type: 'object', additionalProperties: { not: {} } } } } },
      'Schema keyword not at #/properties/a/items/additionalProperties is not supported by jsonSchemaCheck.',
    ],
  ] as const) {
    it(`names the keyword and where it is: ${label}`, () => {
      assert.throws(() => assertSupportedSchema(schema as unknown as SchemaNode), { message });
    });
  }

  it('starts the place where it is told to', () => {
    assert.throws(() => assertSupportedSchema({ if: {} } as unknown as SchemaNode, '#/definitions/x'), {
      message: 'Schema keyword if at #/definitions/x is not supported by jsonSchemaCheck.',
    });
  });
});
