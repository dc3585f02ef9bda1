import * as fs from 'node:fs';
import { decodeLinkTarget } from '../../src/core/stores/linkTarget';
import { unpackPage } from '../../src/core/stores/packedPage';
import { unframeRevision } from '../../src/core/stores/revisionFraming';
import { walk } from './tempDir';

/** A stored file's bytes: the file driver keeps small records as a symbolic link's target, others as files. */
export function storedText(file: string): string {
  return fs.lstatSync(file).isSymbolicLink() ? (decodeLinkTarget(fs.readlinkSync(file)) ?? '') : fs.readFileSync(file, 'latin1');
}

/**
 * Every text a file-driver store holds, for checks that a secret is nowhere in it: each file's bytes and, for a
 * container revision whose page is packed (packedPage.ts), the page's JSON too — compressed bytes hide what they hold.
 */
export function storeTexts(store: string): string[] {
  return walk(store).files.flatMap(file => {
    const text = storedText(file);
    return [text, ...unpackedPage(text)];
  });
}

function unpackedPage(text: string): string[] {
  const json = unframeRevision(text);
  if (json === undefined) return [];
  try {
    const envelope = JSON.parse(json) as { v?: unknown };
    const page = unpackPage(envelope?.v, 'file');
    return page === envelope?.v ? [] : [JSON.stringify(page)];
  } catch {
    return [];
  }
}
