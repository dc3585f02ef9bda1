// Types of scripts/asciiComments.mjs, for its unit test (test/unit/asciiComments.test.ts).
export declare function hasNonAscii(code: string): boolean;
export declare function asciiComments(code: string, withoutComments: string): { code: string; ascii: boolean };
