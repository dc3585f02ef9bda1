/**
 * A value whose JSON text was already made (a lock page's stored form: packedPage.ts `packedJson`), handed
 * to a store's cells so that they store that text instead of stringifying the value a second time. Only
 * record cells receive one; {@link jsonText} is how every cell turns what it is given into its text.
 */
export class SerializedJson {
  constructor(readonly text: string) {}
}

/** The JSON text of a value a cell stores: the text made before for a {@link SerializedJson}. */
export function jsonText(value: unknown): string | undefined {
  return value instanceof SerializedJson ? value.text : JSON.stringify(value);
}
