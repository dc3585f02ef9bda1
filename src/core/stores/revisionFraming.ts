import { crc32Hex } from './crc32';

/**
 * How the file driver frames a container record's revision (a symbolic link's target or a small
 * file, see file.ts): `2:<crc>:<JSON>`, where `<crc>` is the CRC-32 of the JSON in 8 hex digits.
 * Pure. Any changed byte then fails to verify: in the JSON or the checksum by the checksum, in
 * the `2:` prefix because the text is then neither framing.
 *
 * Revisions written before the checksum are bare JSON (`{…}`) and are still read, unverified:
 * container records live as long as their container, so refusing them would leave every existing
 * container without its lock page; the next write of each record replaces its revision with a
 * checksummed one, and a bare revision with a damaged byte that still parses cannot be told apart.
 */

const FRAMED = /^2:([0-9a-f]{8}):/;

export function frameRevision(json: string): string {
  return `2:${crc32Hex(json)}:${json}`;
}

/** The JSON of a revision's text; undefined when the text is neither framing or does not verify. */
export function unframeRevision(text: string): string | undefined {
  if (text.startsWith('{')) return text; // written before the checksum: JSON.parse is all the check there is
  const match = FRAMED.exec(text);
  if (!match) return undefined;
  const json = text.slice(match[0].length);
  return crc32Hex(json) === match[1] ? json : undefined;
}
