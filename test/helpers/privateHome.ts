/**
 * Loaded first by every mocha run (the `require` of .mocharc.*.json and of scripts/suites/*.sh): the tests and
 * every process they start get a private, empty HOME and no system or global git configuration, so the
 * developer's machine (a global core.hooksPath, push.pushOption, commit signing, a credential helper) cannot
 * change what they see. Tests give git its identity through each repository's local config or the environment.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, removeTempDir } from './tempDir';

const home = makeTempDir('lockstep-home');
const globalConfig = path.join(home, '.gitconfig');
fs.writeFileSync(globalConfig, '');
process.env.HOME = home;
process.env.XDG_CONFIG_HOME = path.join(home, '.config');
process.env.GIT_CONFIG_NOSYSTEM = '1';
process.env.GIT_CONFIG_GLOBAL = globalConfig;
// Configuration smuggled in through the environment counts as the machine's too.
for (const name of Object.keys(process.env)) {
  if (/^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/.test(name) || name === 'GIT_CONFIG') delete process.env[name];
}

export const mochaHooks = {
  afterAll(): void {
    removeTempDir(home);
  },
};
