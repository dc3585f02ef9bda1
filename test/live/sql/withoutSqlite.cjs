// Preloaded (node --require) by sqlite.test.ts: behaves like an editor host whose Node cannot load
// the native better-sqlite3 module (e.g. built for another ABI). Matches the package name and the
// resolved path, since import() of a CommonJS package reaches Module._load with the full path.
const Module = require('node:module');
const load = Module._load;
Module._load = function (request, ...rest) {
  if (/(^|[\\/])better-sqlite3([\\/]|$)/.test(String(request))) {
    throw new Error('better-sqlite3 was compiled against a different Node.js version (simulated)');
  }
  return load.call(this, request, ...rest);
};
