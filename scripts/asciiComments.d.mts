// Types of scripts/asciiComments.mjs, for its unit test (test/unit/asciiComments.test.ts) and test/helpers/gitFixture.ts.
export declare function hasNonAscii(code: string): boolean;
export declare function asciiComments(code: string, withoutComments: string): { code: string; ascii: boolean };
export declare function asciiBundle(
  esbuild: { transform(code: string, options: object): Promise<{ code: string }> },
  text: string,
): Promise<{ code: string; ascii: boolean }>;
