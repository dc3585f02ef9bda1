// A throwaway real VS Code for tests: code-server on 127.0.0.1 with a free port and every folder it writes
// (XDG dirs, TMPDIR, user data, extensions) inside one run folder, plus a headless Debian Chromium through
// playwright-core. The hosts come from scripts/vscode-host/setup.sh, which writes the env file read here.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const HARNESS = path.dirname(fileURLToPath(import.meta.url));
export const PROJECT_ROOT = path.resolve(HARNESS, '../../..');
const started = Date.now();
export const log = (...parts) => console.log(`[vscode ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s]`, ...parts);

/** The env file of scripts/vscode-host/setup.sh, read when the runner was not started with it sourced. */
function hostEnv() {
  if (process.env.LOCKSTEP_VSCODE_HOSTS !== undefined) return process.env;
  const cache = process.env.LOCKSTEP_CACHE || path.join(os.homedir(), '.cache', 'lockstep');
  const file = path.join(cache, 'vscode-host', 'env.sh');
  if (!fs.existsSync(file)) return {};
  const vars = {};
  for (const [, key, value] of fs.readFileSync(file, 'utf8').matchAll(/^export (\w+)="(.*)"$/gm)) vars[key] = value;
  return vars;
}

/**
 * The installed host for `name`: '1.100', '1.139', 'oldest' or 'newest'.
 * @returns {{ name: string, codeServer: string, nodeBin: string, chromium: string }}
 */
export function resolveHost(name = 'newest') {
  const env = hostEnv();
  const installed = (env.LOCKSTEP_VSCODE_HOSTS ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));
  const chosen = name === 'newest' ? installed.at(-1) : name === 'oldest' ? installed[0] : name;
  const key = (chosen ?? '').replace('.', '_');
  const codeServer = env[`LOCKSTEP_CODE_SERVER_${key}`];
  if (!chosen || !codeServer || !fs.existsSync(codeServer)) {
    throw new Error(
      `VS Code host ${name} is not installed (installed: ${installed.join(', ') || 'none'}); ` +
        `run: bash scripts/vscode-host/setup.sh ${['1.100', '1.139'].includes(name) ? name : 'all'}`,
    );
  }
  return {
    name: chosen,
    codeServer,
    nodeBin: env[`LOCKSTEP_CODE_SERVER_NODE_${key}`] ?? '',
    chromium: env.LOCKSTEP_CHROMIUM || '/usr/bin/chromium',
  };
}

/**
 * A run folder under the system temp folder (short paths: VS Code puts Unix sockets in TMPDIR, limited to 107
 * bytes). `dispose(keep)` deletes it, or keeps it and says where it is.
 */
export function createRun(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `lockstep-${label.replace(/[^\w.-]/g, '_')}-`));
  const paths = {
    userData: `${dir}/user-data`,
    extensions: `${dir}/extensions`,
    tmp: `${dir}/tmp`,
    xdg: `${dir}/xdg`,
    chromium: `${dir}/chromium`,
    config: `${dir}/code-server.yaml`,
    log: `${dir}/code-server.log`,
  };
  for (const d of [
    `${paths.userData}/User`,
    paths.extensions,
    paths.tmp,
    `${paths.xdg}/config`,
    `${paths.xdg}/data`,
    `${paths.xdg}/cache`,
    paths.chromium,
  ])
    fs.mkdirSync(d, { recursive: true });
  // A quiet workbench: no welcome page, telemetry, update checks, AI panels, git scanning of the fixture or auto-save.
  fs.writeFileSync(
    `${paths.userData}/User/settings.json`,
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'workbench.enableExperiments': false,
        'chat.disableAIFeatures': true,
        'git.enabled': false,
        'security.workspace.trust.enabled': false,
        'window.commandCenter': false,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        // code-server saves after a delay by default: a test's unsaved edit must stay unsaved (it never reaches the clone).
        'files.autoSave': 'off',
      },
      null,
      2,
    ),
  );
  return {
    dir,
    paths,
    label,
    /** Logs worth reading after a failure, copied to test-artifacts/vscode-logs/<label>/. */
    saveLogs() {
      const dest = path.join(PROJECT_ROOT, 'test-artifacts', 'vscode-logs', label);
      fs.rmSync(dest, { recursive: true, force: true });
      fs.mkdirSync(dest, { recursive: true });
      if (fs.existsSync(paths.log)) fs.copyFileSync(paths.log, `${dest}/code-server.log`);
      if (fs.existsSync(`${paths.userData}/logs`)) fs.cpSync(`${paths.userData}/logs`, `${dest}/logs`, { recursive: true });
      return dest;
    },
    dispose(keep = Boolean(process.env.LOCKSTEP_KEEP_RUN)) {
      if (keep) log(`run folder kept: ${dir}`);
      else fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Turns workspace trust on in the run's user settings, without the start-up prompt: every folder opens untrusted
 * (restricted mode) and stays so. Pair with startCodeServer's `workspaceTrust`.
 */
export function trustWorkspaces(run) {
  const file = `${run.paths.userData}/User/settings.json`;
  fs.writeFileSync(
    file,
    JSON.stringify(
      {
        ...JSON.parse(fs.readFileSync(file, 'utf8')),
        'security.workspace.trust.enabled': true,
        'security.workspace.trust.startupPrompt': 'never',
      },
      null,
      2,
    ),
  );
}

/** code-server's environment: the run's own XDG dirs and TMPDIR, the host's Node first on PATH. */
export function hostEnvironment(host, run, extra = {}) {
  const env = { ...process.env };
  // A VS Code terminal's VSCODE_* variables would make code-server's CLI talk to that other VS Code; NODE_OPTIONS
  // from our own tooling does not belong in a Node 24 server.
  for (const key of Object.keys(env))
    if (key.startsWith('VSCODE_') || key === 'ELECTRON_RUN_AS_NODE' || key === 'NODE_OPTIONS') delete env[key];
  // The runner's own Lockstep settings (an identity, a store) must not leak into the host: each test says what it uses.
  for (const key of Object.keys(env)) if (key.startsWith('LOCKSTEP_') && !key.startsWith('LOCKSTEP_VSCODE_')) delete env[key];
  return {
    ...env,
    PATH: host.nodeBin ? `${host.nodeBin}:${env.PATH}` : env.PATH,
    TMPDIR: run.paths.tmp,
    XDG_CONFIG_HOME: `${run.paths.xdg}/config`,
    XDG_DATA_HOME: `${run.paths.xdg}/data`,
    XDG_CACHE_HOME: `${run.paths.xdg}/cache`,
    // No extension gallery: tests install only local .vsix files and must not reach for open-vsx.org.
    EXTENSIONS_GALLERY: '{}',
    ...extra,
  };
}

const commonArgs = run => ['--config', run.paths.config, '--user-data-dir', run.paths.userData, '--extensions-dir', run.paths.extensions];

/** Installs a .vsix into the run's extensions folder with code-server's own CLI. */
export async function installExtension(host, run, vsix) {
  await promisify(execFile)(host.codeServer, [...commonArgs(run), '--install-extension', vsix], {
    env: hostEnvironment(host, run),
    timeout: 120_000,
  });
}

/** A port that was free a moment ago on 127.0.0.1 (startCodeServer retries when someone took it meanwhile). */
export async function freePort() {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

const smokeDriverSupport = new Map();
/**
 * VS Code 1.139 ignores the test `payload` unless started with the smoke-test driver, passed via --vscode-option.
 * Only the extension-test runner wants it: with it the workbench shows no notification toasts at all.
 */
async function smokeDriverArgs(host, run) {
  if (!smokeDriverSupport.has(host.codeServer)) {
    const { stdout } = await promisify(execFile)(host.codeServer, ['--help'], { env: hostEnvironment(host, run), timeout: 60_000 });
    smokeDriverSupport.set(host.codeServer, stdout.includes('--vscode-option'));
  }
  return smokeDriverSupport.get(host.codeServer) ? ['--vscode-option', 'enable-smoke-test-driver'] : [];
}

/**
 * Starts code-server under processGuard.mjs, so the whole process group goes away with this process, whatever
 * ends it. Resolves once /healthz answers. `testPayload`: accept the extension-test payload (see smokeDriverArgs).
 * `workspaceTrust`: leave workspace trust on (every other run switches it off; see trustWorkspaces).
 * @returns {Promise<{ port: number, origin: string, authority: string, stop(): Promise<void> }>}
 */
export async function startCodeServer(host, run, { env = {}, port, args = [], testPayload = false, workspaceTrust = false } = {}) {
  const smoke = testPayload ? await smokeDriverArgs(host, run) : [];
  for (let attempt = 1; ; attempt++) {
    const chosenPort = port ?? (await freePort());
    const argv = [
      ...commonArgs(run),
      '--bind-addr',
      `127.0.0.1:${chosenPort}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(workspaceTrust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      ...smoke,
      ...args,
    ];
    const logStart = fs.existsSync(run.paths.log) ? fs.statSync(run.paths.log).size : 0;
    const guard = spawn(process.execPath, [path.join(HARNESS, 'processGuard.mjs'), run.paths.log, '--', host.codeServer, ...argv], {
      env: hostEnvironment(host, run, env),
      stdio: ['pipe', 'inherit', 'inherit'],
    });
    const exited = once(guard, 'exit');
    const stop = async () => {
      if (guard.exitCode !== null || guard.signalCode !== null) return;
      guard.stdin.end();
      const killer = setTimeout(() => guard.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    };
    const origin = `http://127.0.0.1:${chosenPort}`;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && guard.exitCode === null) {
      try {
        const res = await fetch(`${origin}/healthz`);
        if (res.ok) {
          log(`code-server ${host.name} up at ${origin} (guard pid ${guard.pid})`);
          return { port: chosenPort, origin, authority: `127.0.0.1:${chosenPort}`, stop };
        }
      } catch {
        /* not listening yet */
      }
      await delay(200);
    }
    await stop();
    const tail = fs.readFileSync(run.paths.log, 'utf8').slice(logStart);
    if (port === undefined && attempt < 3 && /EADDRINUSE/.test(tail)) {
      log(`port ${chosenPort} was taken; trying another`);
      continue;
    }
    throw new Error(`code-server ${host.name} did not answer /healthz within 60 s; its log: ${run.paths.log}\n${tail.slice(-2000)}`);
  }
}

/** Headless Debian Chromium with a fresh profile in the run folder. Returns a playwright BrowserContext. */
export async function launchChromium(host, run) {
  const { chromium } = await import('playwright-core');
  return chromium.launchPersistentContext(run.paths.chromium, {
    executablePath: host.chromium,
    headless: true,
    viewport: { width: 1280, height: 800 },
    // Chromium otherwise writes ~/.config/chromium and ~/.cache.
    env: { ...process.env, XDG_CONFIG_HOME: `${run.paths.xdg}/config`, XDG_CACHE_HOME: `${run.paths.xdg}/cache` },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** `--name value` options of a runner's command line. */
export function parseOptions(argv, defaults) {
  const options = { ...defaults };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in defaults) || argv[i + 1] === undefined)
      throw new Error(
        `unknown or incomplete option ${argv[i]}; known: ${Object.keys(defaults)
          .map(k => `--${k}`)
          .join(' ')}`,
      );
    options[key] = argv[i + 1];
  }
  return options;
}
