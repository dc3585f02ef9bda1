import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID, lockstepApi } from './backend';
import { until } from './until';

// Issue 26: every `lockstep …` a tooltip or a notification names runs, as written, in VS Code's integrated
// terminal — the extension puts the CLI it bundles on the terminals' PATH, with no installation of its own.
suite('the lockstep command in the integrated terminal', () => {
  suiteSetup(async () => {
    await lockstepApi();
  });

  test('a new integrated terminal runs `lockstep --version` and `lockstep status` in the workspace: the bundled CLI', async function () {
    if (process.platform === 'win32') this.skip(); // the sh launcher; Windows runs lockstep.cmd (issue 29)
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-terminal-'));
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const terminal = vscode.window.createTerminal({
      name: 'lockstep terminal test',
      cwd: folder,
      shellPath: '/bin/sh',
      shellArgs: [
        '-c',
        `command -v lockstep > '${out}/which'; lockstep --version --json > '${out}/version'; lockstep status --json > '${out}/status'; echo $? > '${out}/done'`,
      ],
    });
    try {
      await until('the terminal to run lockstep', () => fs.existsSync(path.join(out, 'done')), 30_000);
      const version = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.version as string;
      assert.deepEqual(JSON.parse(fs.readFileSync(path.join(out, 'version'), 'utf8')), { ok: true, version });
      const status = JSON.parse(fs.readFileSync(path.join(out, 'status'), 'utf8'));
      assert.equal(status.ok, true, JSON.stringify(status));
      assert.match(status.container, /^[0-9a-f-]{36}$/);
      // It is the extension's own launcher, in its global storage, that the terminal found first.
      const found = fs.readFileSync(path.join(out, 'which'), 'utf8').trim();
      assert.match(found, /[\\/]bin[\\/]lockstep$/);
      assert.match(fs.readFileSync(found, 'utf8'), /dist\/cli\.js' "\$@"/);
    } finally {
      terminal.dispose();
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
