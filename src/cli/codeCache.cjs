'use strict';
// dist/code-cache.js (scripts/build.mjs copies it beside the bundles): loads one of the bundles with
// V8's code cache kept in a private per-user folder, so that a hook or a command does not compile
// half a megabyte of JavaScript on every run.
//
// Node >= 22.1 has its own cache (module.enableCompileCache): it is given our folder (its default is
// os.tmpdir(), which other users can write). Before that (Node 20), the bundle is compiled through
// vm.Script with the cached data of the last run, and at exit, once the command's lazily compiled
// functions are compiled too, the cache is written when there was none or V8 rejected it.
//
// A V8 cache is code: one planted by someone else runs as whoever reads it. So it is read only from
// a folder and a file that this user owns and that nobody else can write (on POSIX), never from the
// temporary folder, and the server guard only uses the home of the user it runs as. Anything
// unexpected on the way (no home, a folder of someone else, a truncated file, a full disk) loads
// the bundle with a plain require: the cache must never make a hook fail.
// (v8-compile-cache does the like for every require, but keeps its cache in os.tmpdir() or a folder an
// environment variable names, without checking who owns it, and writes it at compile time, before the lazily
// compiled functions: not for a hook.)
// LOCKSTEP_NO_CODE_CACHE=1 turns it off; LOCKSTEP_DEBUG_CODE_CACHE=1 says on stderr what it did (both
// but in the server guard, which ignores every LOCKSTEP_* variable).
const fs = require('node:fs');
const path = require('node:path');
// The Module class that require('node:module') returns, taken from this module: on Node 20 that public module would
// also load the ES module loader and source-map support, builtins compiled on every start that nothing here uses.
const Module = module.constructor;
/** Node >= 22.1, whose public module has enableCompileCache (attached when node:module loads). */
const [NODE_MAJOR, NODE_MINOR] = process.versions.node.split('.').map(Number);
const HAS_COMPILE_CACHE = NODE_MAJOR > 22 || (NODE_MAJOR === 22 && NODE_MINOR >= 1);

/** What Node >= 22.1's enableCompileCache answered, as LOCKSTEP_DEBUG_CODE_CACHE says it. */
const NODE_CACHE_STATUS = {
  ENABLED: 'on, in the private folder',
  ALREADY_ENABLED: 'on already (NODE_COMPILE_CACHE names its folder)',
  DISABLED: 'off (NODE_DISABLE_COMPILE_CACHE)',
  FAILED: 'off (Node could not use the folder)',
};

/** The cache's own folder below the per-user cache folder. */
const SUBFOLDER = ['lockstep', 'v8'];

function debug(env, what) {
  if (env.LOCKSTEP_DEBUG_CODE_CACHE === '1') process.stderr.write(`lockstep code cache: ${what}\n`);
}

/**
 * The per-user cache folder (not yet checked): Linux and others `$XDG_CACHE_HOME` or `~/.cache`,
 * macOS `~/Library/Caches`, Windows `%LOCALAPPDATA%`; undefined without a home. The server guard
 * (`serverGuard`) takes only HOME, the home of the server's user over ssh (git daemon or a web
 * server may leave it unset: then no cache), and ignores XDG_CACHE_HOME as it ignores LOCKSTEP_*.
 */
function userCacheBase(env, platform, serverGuard) {
  if (platform === 'win32') return env.LOCALAPPDATA && path.isAbsolute(env.LOCALAPPDATA) ? env.LOCALAPPDATA : undefined;
  const home = env.HOME;
  if (!home || !path.isAbsolute(home)) return undefined;
  if (platform === 'darwin') return path.join(home, 'Library', 'Caches');
  if (!serverGuard && env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME)) return env.XDG_CACHE_HOME;
  return path.join(home, '.cache');
}

/** True when `stats` is this user's and nobody else can write it (always true where there are no uids). */
function private_(stats) {
  if (typeof process.geteuid !== 'function') return true;
  return stats.uid === process.geteuid() && (stats.mode & 0o022) === 0;
}

/**
 * The cache folder, created 0700 where missing, or undefined when it (or the folder above it, or
 * the user's cache folder) is not a directory of this user that nobody else can write. `shut`: nobody
 * else can even reach into it (no permission for group or others; always so where there are no uids).
 */
function privateFolder(base) {
  const lockstep = path.join(base, SUBFOLDER[0]);
  const folder = path.join(lockstep, SUBFOLDER[1]);
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  let stats;
  for (const dir of [base, lockstep, folder]) {
    stats = fs.statSync(dir);
    if (!stats.isDirectory() || !private_(stats)) return undefined;
  }
  return { path: folder, shut: typeof process.geteuid !== 'function' || (stats.mode & 0o077) === 0 };
}

/** The cache folder for this run ({@link privateFolder}), or undefined (with the reason said under LOCKSTEP_DEBUG_CODE_CACHE). */
function cacheFolder(env, serverGuard) {
  if (env.LOCKSTEP_NO_CODE_CACHE === '1') return debug(env, 'off (LOCKSTEP_NO_CODE_CACHE)');
  const base = userCacheBase(env, process.platform, serverGuard);
  if (base === undefined) return debug(env, 'off (no home of this user)');
  const folder = privateFolder(base);
  if (folder === undefined) return debug(env, 'off (the cache folder is not private to this user)');
  return folder;
}

/** Two 32-bit FNV-1a of `text` (two offsets), in hex: names one bundle's cache for one Node; no security rests on it. */
function fnv1a(text) {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    a = Math.imul(a ^ text.charCodeAt(i), 0x01000193);
    b = Math.imul(b ^ text.charCodeAt(i), 0x01000193);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/**
 * The cache file of the bundle `file` as it is now (size, mtime) for this Node, its architecture and
 * its flags: `<bundle>-<its folder>-<its version>-<this Node>.v8`. Every Node (the user's and the
 * one a hook was installed with) keeps its own; a rebuilt or updated bundle leaves old ones behind,
 * which writeCache removes.
 */
function cacheFile(folder, file, stats) {
  const node = [process.version, process.versions.v8, process.arch, process.execArgv.join(' '), process.env.NODE_OPTIONS ?? ''];
  return path.join(folder, `${bundlePrefix(file)}${fnv1a(`${stats.size}\0${stats.mtimeMs}`)}-${fnv1a(node.join('\0'))}.v8`);
}

/** The name's start shared by every cache of the bundle `file` (its name and its folder). */
function bundlePrefix(file) {
  return `${path.basename(file)}-${fnv1a(path.dirname(file))}-`;
}

/** The cached data in `file`, or undefined when there is none or it is not a private regular file. */
function readCache(file) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stats = fs.fstatSync(fd);
    return stats.isFile() && private_(stats) ? fs.readFileSync(fd) : undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** A copy being written (`<cache>.v8.<pid>.tmp`, see writeCache) of any bundle. */
const TEMPORARY = /\.v8\.\d+\.tmp$/;
/**
 * A copy older than this was left by a process killed while writing it (a write takes milliseconds). Its pid
 * is not asked: a home shared between machines may hold the copy of a process running on another one.
 */
const STALE_TEMPORARY_MS = 60 * 60 * 1000;

/**
 * Writes `data` as `file` (the cache of `bundle`) by a rename of a complete private copy, then removes
 * the caches of the bundle's earlier versions (another Node's cache of this version stays) and the copies
 * that processes killed while writing left behind. Only here, when a cache is written: a run that reads
 * the cache does not list the folder.
 */
function writeCache(file, bundle, data) {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, data, { mode: 0o600, flag: 'wx' });
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
  const folder = path.dirname(file);
  const prefix = bundlePrefix(bundle);
  const version = path.basename(file).slice(prefix.length, prefix.length + 16);
  let names = [];
  try {
    names = fs.readdirSync(folder);
  } catch {
    /* nothing to tidy this time */
  }
  for (const name of names)
    try {
      const earlier = name.startsWith(prefix) && name.endsWith('.v8') && name.slice(prefix.length, prefix.length + 16) !== version;
      if (earlier || (TEMPORARY.test(name) && Date.now() - fs.lstatSync(path.join(folder, name)).mtimeMs > STALE_TEMPORARY_MS))
        fs.rmSync(path.join(folder, name), { force: true });
    } catch {
      /* another process may be reading it (Windows) or have removed it: it goes next time */
    }
}

/**
 * Compiles `file` as CommonJS (the wrapper `require` gives it) with `cachedData`, or undefined
 * when the code cache cannot load it exactly as `require` would: on Node 20 a function compiled from
 * the cache loses its import() (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING, whatever importModuleDynamically
 * says), so a bundle that might import() is required (scripts/build.mjs makes the bundles' import() a
 * require; a text search errs towards no cache).
 */
function compile(file, source, cachedData) {
  if (source.includes('import(') || source.startsWith('#!')) return undefined;
  return new (require('node:vm').Script)(Module.wrap(source), { filename: file, cachedData });
}

/** Runs a compiled wrapper as the module `file` and returns its exports (what require returns). */
function run(script, file) {
  const wrapper = script.runInThisContext({ displayErrors: true });
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  require.cache[file] = mod;
  wrapper.call(mod.exports, mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
  return mod.exports;
}

/** Source maps are applied only to what Node compiles itself: with them on, the bundle is required. */
function sourceMapsOn() {
  return (
    process.sourceMapsEnabled === true ||
    process.execArgv.includes('--enable-source-maps') ||
    (process.env.NODE_OPTIONS ?? '').includes('--enable-source-maps')
  );
}

/**
 * Node >= 22.1 keeps its cache as `node/<Node version and flags>/<one file per module>`, creating them with the
 * user's umask, and reads those files without asking who wrote them. They are safe when nobody else could have
 * reached them: the cache folder shut to everyone but the user (0700, whatever the umask made of Node's own folders
 * and files below it: loadBundle shuts a folder it finds open, such as 0755, which privateFolder accepts, and
 * removes `node`, since someone may have written below it while it was open) and, checked here, every entry below
 * `node` the user's own, and no symbolic link. Missing (the first run): own. More than a few dozen entries: not
 * (removed; this also bounds the Node versions left behind).
 */
function nodeCacheIsOwn(nodeFolder) {
  const uid = typeof process.geteuid === 'function' ? process.geteuid() : undefined;
  let checked = 0;
  const ownEntry = (entry, depth) => {
    if (++checked > 64) return false;
    const stats = fs.lstatSync(entry);
    if (uid !== undefined && stats.uid !== uid) return false;
    if (stats.isFile()) return depth === 2;
    if (!stats.isDirectory() || depth === 2) return false;
    return fs.readdirSync(entry).every(name => ownEntry(path.join(entry, name), depth + 1));
  };
  return !fs.existsSync(nodeFolder) || ownEntry(nodeFolder, 0);
}

/**
 * Node 20: the bundle compiled with the cache of the last run; undefined where the cache cannot be
 * used (then the caller requires it). Only reading and compiling are guarded: the bundle's own top
 * level runs once, outside, and its errors are its own.
 */
function compileCached(file, env, serverGuard) {
  let script;
  let cache;
  let hadCache = false;
  try {
    if (sourceMapsOn()) return debug(env, 'off (source maps)');
    const folder = cacheFolder(env, serverGuard);
    if (folder === undefined) return undefined;
    const source = fs.readFileSync(file, 'utf8');
    cache = cacheFile(folder.path, file, fs.statSync(file));
    const cachedData = readCache(cache);
    hadCache = cachedData !== undefined;
    script = compile(file, source, cachedData);
    if (script === undefined) return debug(env, 'off (the bundle may import())');
  } catch {
    return debug(env, 'off (error)');
  }
  const accepted = hadCache && !script.cachedDataRejected;
  debug(env, accepted ? 'accepted' : hadCache ? 'rejected' : 'absent');
  if (!accepted)
    process.once('exit', () => {
      try {
        writeCache(cache, file, script.createCachedData());
        debug(env, 'written');
      } catch {
        debug(env, 'not written');
      }
    });
  return script;
}

/**
 * The exports of the bundle `file` (absolute), loaded with the code cache where it is safe.
 * `serverGuard`: the server guard, whose environment may be the pusher's; it ignores every LOCKSTEP_*
 * variable (README, The server guard), these two as well.
 */
function loadBundle(file, { serverGuard = false } = {}) {
  const env = serverGuard ? Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('LOCKSTEP_'))) : process.env;
  if (HAS_COMPILE_CACHE) {
    try {
      const folder = cacheFolder(env, serverGuard);
      if (folder !== undefined) {
        const nodeFolder = path.join(folder.path, 'node');
        if (!folder.shut) fs.chmodSync(folder.path, 0o700);
        if (!folder.shut || !nodeCacheIsOwn(nodeFolder)) {
          // A folder others could reach, or someone else's entry: Node's whole cache goes, and Node writes it anew.
          fs.rmSync(nodeFolder, { recursive: true, force: true });
          debug(env, "removed (Node's own cache could have been written by someone else)");
        }
        const { enableCompileCache, constants } = require('node:module');
        const { status } = enableCompileCache(nodeFolder);
        const name = Object.keys(constants.compileCacheStatus).find(key => constants.compileCacheStatus[key] === status);
        debug(env, `node's own: ${NODE_CACHE_STATUS[name] ?? status}`);
      }
    } catch {
      debug(env, 'off (error)');
    }
    return require(file);
  }
  const script = compileCached(file, env, serverGuard);
  return script === undefined ? require(file) : run(script, file);
}

module.exports = { loadBundle, userCacheBase, cacheFolder };
