import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { importSpecifiers, sourceFiles } from '../helpers/sourceImports';

/**
 * The floors and rooms of docs/architecture.md ("Floors and rooms"), kept by reading every import of every
 * `src/**` file: static, `export … from`, `import()` and `require()`, type-only included (test/helpers/sourceImports.ts;
 * the integration suite checks it reads what the TypeScript scanner reads). Each rule names what broke it; an
 * exception is an entry of an allow-list below with its reason, and an entry nothing uses any more fails too, so the
 * lists stay true.
 */

interface Import {
  /** Importer and target, relative to the repository with `/` (`src/core/config.ts`); a package's bare name as written. */
  readonly from: string;
  readonly to: string;
}

interface Exception {
  readonly from: string;
  readonly to: string;
  readonly why: string;
}

/**
 * Imports of a driver's internals from outside `src/core/stores/`. The drivers' public face is `stores/store.ts` (what
 * a driver is); everything else under `stores/` belongs to the drivers.
 */
const DRIVER_INTERNALS_ALLOWED: readonly Exception[] = [
  ...['memory', 'file', 'signedChainDriver', 'redis/redisDriver', 'etcd/etcdDriver', 'sql/sqlDriver', 'git/gitDriver'].map(d => ({
    from: 'src/core/drivers.ts',
    to: `src/core/stores/${d}.ts`,
    why: 'drivers.ts is where a driver is opened by its name: it alone constructs each driver',
  })),
  {
    from: 'src/core/guard/leaseUpdate.ts',
    to: 'src/core/stores/leaseState.ts',
    why: "the server guard checks a pushed lease ref with the drivers' own lease-state shape and its validity check",
  },
  {
    from: 'src/core/container/signedPage.ts',
    to: 'src/core/stores/git/verifiedHistory.ts',
    why: "a signed page's signing policy is the git driver's verified-history type (type only)",
  },
  {
    from: 'src/core/container/signedPage.ts',
    to: 'src/core/stores/git/signersFile.ts',
    why: "the allowed-signers file's size limit, read by the container as the git driver reads it",
  },
  {
    from: 'src/core/verify/pageHistory.ts',
    to: 'src/core/stores/git/signersFile.ts',
    why: "the allowed-signers file's size limit, read by verify as the git driver reads it",
  },
  {
    from: 'src/core/container/pageLocation.ts',
    to: 'src/core/stores/redis/redisTarget.ts',
    why: "where the page lives, told without credentials: the Redis driver's own URL redaction",
  },
  {
    from: 'src/core/container/pageLocation.ts',
    to: 'src/core/stores/etcd/etcdEndpoints.ts',
    why: "where the page lives, told without credentials: the etcd driver's own endpoint list, sorted and redacted",
  },
  {
    from: 'src/core/guard/serverSettings.ts',
    to: 'src/core/stores/etcd/etcdEndpoints.ts',
    why: '`hooks status --server` shows the pinned etcd members as the driver prints them: sorted, without credentials',
  },
  {
    from: 'src/core/diagnosis/doctorFacts.ts',
    to: 'src/core/stores/etcd/etcdTls.ts',
    why: "doctor's TLS finding: which CA file (by name) the etcd driver trusts, read from the settings even when no member answers",
  },
  {
    from: 'src/core/container/pageLocation.ts',
    to: 'src/core/stores/sql/databaseUrl.ts',
    why: "where the page lives: the SQL driver's default SQLite file name",
  },
];

/**
 * Imports that run back up a floor of `src/core` and would close a cycle between its folders. Leaving them out of the
 * folder graph must leave it without cycles.
 */
const UPWARD_ALLOWED: readonly Exception[] = [];

const SRC = 'src';

/** A relative specifier's file among `files` (`x` → `x.ts`, `x/index.ts`), or `x` itself (JSON); undefined when there is none. */
function resolve(files: ReadonlySet<string>, from: string, specifier: string): string | undefined {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  return (
    [`${base}.ts`, `${base}/index.ts`].find(f => files.has(f)) ?? (fs.existsSync(base) && fs.statSync(base).isFile() ? base : undefined)
  );
}

let cache: { imports: Import[]; unresolved: string[] } | undefined;
function allImports(): { imports: Import[]; unresolved: string[] } {
  if (cache) return cache;
  const imports: Import[] = [];
  const unresolved: string[] = [];
  const files = sourceFiles(SRC);
  const known = new Set(files);
  for (const from of files) {
    for (const fileName of importSpecifiers(fs.readFileSync(from, 'utf8'))) {
      if (!fileName.startsWith('.')) {
        imports.push({ from, to: fileName });
        continue;
      }
      const to = resolve(known, from, fileName);
      if (to) imports.push({ from, to });
      else unresolved.push(`${from} → ${fileName}`);
    }
  }
  cache = { imports, unresolved };
  return cache;
}

const show = (i: Import) => `${i.from} → ${i.to}`;
const listed = (list: readonly Exception[], i: Import) => list.some(e => e.from === i.from && e.to === i.to);
const inCore = (f: string) => f.startsWith('src/core/');
/** The drivers' faces: what a driver is (store.ts), and the git driver's page as it lies in a repository, for readers with no driver. */
const DRIVER_FACES = new Set(['src/core/stores/store.ts', 'src/core/stores/gitPageLayout.ts']);
const isDriverInternal = (f: string) => f.startsWith('src/core/stores/') && !DRIVER_FACES.has(f);
/** The one entry of src/core for the command line and the extension. */
const APPLICATION_ENTRY = 'src/core/application.ts';

/** The room of `src/core` a file is in: its folder (`stores/`), or the file itself on core's ground (`config.ts`). */
function room(file: string): string {
  const rest = file.slice('src/core/'.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? rest : rest.slice(0, slash + 1);
}

/** Every cycle's rooms (strongly connected components of more than one room), Tarjan's algorithm. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('layers: the floors and rooms of src/', () => {
  it('every relative import of src/ names a file that exists', () => {
    assert.deepEqual(allImports().unresolved, []);
  });

  it('src/core imports nothing of vscode, src/cli or src/extension', () => {
    const offenders = allImports().imports.filter(
      i =>
        inCore(i.from) &&
        (i.to === 'vscode' || i.to.startsWith('vscode/') || i.to.startsWith('src/cli/') || i.to.startsWith('src/extension/')),
    );
    assert.deepEqual(offenders.map(show), []);
  });

  it('src/core/container imports nothing of hooks/, guard/ or diagnosis/ (the floors above it)', () => {
    const above = ['src/core/hooks/', 'src/core/guard/', 'src/core/diagnosis/'];
    const offenders = allImports().imports.filter(i => i.from.startsWith('src/core/container/') && above.some(a => i.to.startsWith(a)));
    assert.deepEqual(offenders.map(show), []);
  });

  it('src/cli and src/extension import src/core only through its application entry (src/core/application.ts)', () => {
    const offenders = allImports().imports.filter(
      i => (i.from.startsWith('src/cli/') || i.from.startsWith('src/extension/')) && inCore(i.to) && i.to !== APPLICATION_ENTRY,
    );
    assert.deepEqual(offenders.map(show), [], 'export what is needed from src/core/application.ts and import it from there');
  });

  it('the application entry only re-exports: it has no code of its own', () => {
    const text = fs.readFileSync(APPLICATION_ENTRY, 'utf8').replace(/\/\*\*[\s\S]*?\*\//g, '');
    const statements = text
      .split(/;\s*\n/)
      .map(t => t.trim())
      .filter(Boolean);
    assert.ok(statements.length > 10);
    for (const statement of statements) assert.match(statement, /^export (type )?\{[\s\S]*\} from '\.\/[\w/]+'$/, statement);
  });

  it("nothing outside src/core/stores/ imports a driver's internals, except the listed few", () => {
    const outside = allImports().imports.filter(i => !i.from.startsWith('src/core/stores/') && isDriverInternal(i.to));
    assert.deepEqual(
      outside.filter(i => !listed(DRIVER_INTERNALS_ALLOWED, i)).map(show),
      [],
      'import stores/store.ts, or list the import with why',
    );
    const unused = DRIVER_INTERNALS_ALLOWED.filter(e => !outside.some(i => i.from === e.from && i.to === e.to));
    assert.deepEqual(unused.map(show), [], 'an allow-list entry no import uses any more: remove it');
  });

  it('the rooms of src/core import one another without a cycle, the listed upward imports aside', () => {
    const edges = new Map<string, Set<string>>();
    const upward: Import[] = [];
    for (const i of allImports().imports) {
      if (!inCore(i.from) || !inCore(i.to) || room(i.from) === room(i.to)) continue;
      if (listed(UPWARD_ALLOWED, i)) {
        upward.push(i);
        continue;
      }
      edges.set(room(i.from), (edges.get(room(i.from)) ?? new Set()).add(room(i.to)));
    }
    assert.deepEqual(cycles(edges), []);
    const unused = UPWARD_ALLOWED.filter(e => !upward.some(i => i.from === e.from && i.to === e.to));
    assert.deepEqual(unused.map(show), [], 'an allow-list entry no import uses any more: remove it');
  });

  it('the exceptions each say why', () => {
    for (const e of [...DRIVER_INTERNALS_ALLOWED, ...UPWARD_ALLOWED]) assert.ok(e.why.length > 20, show(e));
  });
});
