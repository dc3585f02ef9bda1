import { CasDriver, type CasCells } from './casDriver';
import { jsonText } from './serializedJson';
import type { CasResult, Disposable, VersionedRecord } from './store';

/**
 * The `memory` driver (docs/leases.md#drivers): one process, no persistence. For tests and single-process programs.
 * Values are stored as JSON text so that callers can never alias stored state.
 */
export class MemoryCells implements CasCells {
  private readonly cells = new Map<string, { text: string; revision: number }>();
  private readonly listeners = new Map<string, Set<() => void>>();

  async get(cell: string): Promise<VersionedRecord | null> {
    const entry = this.cells.get(cell);
    return entry ? { value: JSON.parse(entry.text), revision: String(entry.revision) } : null;
  }

  async put(cell: string, expectedRevision: string | null, value: unknown): Promise<CasResult> {
    const entry = this.cells.get(cell);
    const actual = entry ? String(entry.revision) : null;
    if (actual !== expectedRevision) return { ok: false };
    const revision = (entry?.revision ?? 0) + 1;
    this.cells.set(cell, { text: jsonText(value) as string, revision });
    for (const listener of this.listeners.get(cell) ?? []) queueMicrotask(listener);
    return { ok: true, revision: String(revision) };
  }

  watch(cell: string, onChange: () => void): Disposable {
    let set = this.listeners.get(cell);
    if (!set) {
      set = new Set();
      this.listeners.set(cell, set);
    }
    set.add(onChange);
    return {
      dispose: () => {
        set.delete(onChange);
      },
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}

export function createMemoryDriver(): CasDriver {
  return new CasDriver('memory', false, new MemoryCells());
}
