import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  checkInitAllowed,
  CONTAINER_FILE,
  type DriverSetting,
  type Finding,
  diagnose as findingsFrom,
  gatherDoctorFacts,
  gitIn,
  initContainer,
  installClientHooks,
} from '../../core/application';
import { CommandIds } from '../commandIds';
import { readSettings } from '../settings';
import { activeModel, guarded, requireTrust, type CommandContext } from './context';

/** Setting a repository up: initialise the container, install the pre-push guard. */
export function registerSetupCommands(ctx: CommandContext): vscode.Disposable[] {
  const installHooks = guarded(ctx, 'Install hooks', async () => {
    const model = activeModel(ctx);
    if (!model || !requireTrust(ctx)) return undefined;
    const cli = vscode.Uri.joinPath(ctx.extensionUri, 'dist', 'cli.js').fsPath;
    const installed = await installClientHooks(model.root, { node: process.execPath, cli });
    void vscode.window.showInformationMessage(
      `Lockstep: pre-push guard installed${installed.chained ? ' (your existing hook still runs first)' : ''}.`,
    );
    return installed.hook;
  });

  const initialise = guarded(ctx, 'Initialise', async () => {
    if (!requireTrust(ctx)) return undefined;
    const candidates = (vscode.workspace.workspaceFolders ?? []).filter(
      f => f.uri.scheme === 'file' && !fs.existsSync(path.join(f.uri.fsPath, CONTAINER_FILE)),
    );
    if (candidates.length === 0) {
      void vscode.window.showInformationMessage('Lockstep: every open folder is a container already (or no folder is open).');
      return undefined;
    }
    const folder =
      candidates.length === 1
        ? candidates[0]
        : await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Initialise which repository?' });
    if (!folder) return undefined;
    // Refusals that need no answers come before the questions (the remote is fetched: it can take a moment).
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Lockstep: checking whether the shared remote is a container already…' },
      () => checkInitAllowed(folder.uri.fsPath),
    );
    const identity = readSettings(folder.uri).identity;
    const answers = await askInitQuestions(folder.uri.fsPath, identity);
    if (answers === undefined) return undefined;
    const { file } = await initContainer(folder.uri.fsPath, { ...(identity ? { identity } : {}), ...answers });
    ctx.workspace.sync();
    const choice = await vscode.window.showInformationMessage(
      `Lockstep: container initialised (driver ${file.driver}, protected ${file.protectedBranches.join(', ')}). Commit ${CONTAINER_FILE}, and install the pre-push guard in this clone.`,
      'Install Hooks',
    );
    if (choice) await vscode.commands.executeCommand(CommandIds.installHooks);
    return file.container;
  });

  const diagnose = guarded(ctx, 'Diagnose', async () => {
    const folder = ctx.workspace.active?.folder ?? vscode.workspace.workspaceFolders?.[0];
    if (!folder) return undefined;
    const settings = readSettings(folder.uri);
    const findings = findingsFrom(
      await gatherDoctorFacts({
        cwd: folder.uri.fsPath,
        overrides: { ...(settings.identity ? { identity: settings.identity } : {}), driver: settings.store },
      }),
    );
    // A file of the extension's own (not an untitled buffer that asks to be saved), shown rendered.
    const page = vscode.Uri.joinPath(ctx.storageUri, 'diagnose', `${folder.name.replace(/[^A-Za-z0-9._-]/g, '_')}.md`);
    await vscode.workspace.fs.writeFile(page, new TextEncoder().encode(diagnosisMarkdown(folder.name, findings)));
    ctx.log.info(`Diagnose: ${findings.length} findings for ${folder.name} in ${page.fsPath}`);
    try {
      await vscode.commands.executeCommand('markdown.showPreview', page);
    } catch (error) {
      // No Markdown preview in this editor: the text itself.
      ctx.log.warn(
        `Diagnose: the Markdown preview could not open (${error instanceof Error ? error.message : String(error)}); showing the text.`,
      );
      await vscode.window.showTextDocument(page, { preview: true });
    }
    return findings;
  });

  return [
    vscode.commands.registerCommand(CommandIds.installHooks, installHooks),
    vscode.commands.registerCommand(CommandIds.initialise, initialise),
    vscode.commands.registerCommand(CommandIds.diagnose, diagnose),
  ];
}

/** The same findings as `lockstep doctor`, as a Markdown page. */
function diagnosisMarkdown(folder: string, findings: readonly Finding[]): string {
  const mark = { ok: '✅', info: 'ℹ️', warning: '⚠️', error: '❌' } as const;
  return [
    `# Lockstep: Diagnose — ${folder}`,
    '',
    ...findings.flatMap(f => [`- ${mark[f.level]} **${f.check}**: ${f.found}`, ...(f.fix ? [`  - fix: \`${f.fix}\``] : [])]),
    '',
  ].join('\n');
}

/**
 * Initialise asks what a team decides once: the driver (where the one lock page lives), the
 * operators (who may clear a silent lock) and the protected branch. Undefined when the user backs out.
 */
async function askInitQuestions(
  root: string,
  identity: string | undefined,
): Promise<{ driver: DriverSetting; operators: string[]; protectedBranches: string[] } | undefined> {
  const drivers: (vscode.QuickPickItem & { driver: DriverSetting })[] = [
    { label: 'file', description: 'a folder on this machine or a shared local disk', driver: 'file' },
    { label: 'git', description: 'the lock page on the shared git remote itself (no server to run)', driver: 'git' },
    { label: 'redis', description: 'a Redis server (LOCKSTEP_REDIS_URL)', driver: 'redis' },
    { label: 'sql', description: 'SQLite, PostgreSQL or MariaDB (LOCKSTEP_DATABASE_URL)', driver: 'sql' },
    { label: 'etcd', description: 'an etcd cluster: fencing kept across failover (LOCKSTEP_ETCD_ENDPOINTS)', driver: 'etcd' },
  ];
  const driver = await vscode.window.showQuickPick(drivers, {
    title: 'Lockstep: Initialise Container (1/3)',
    placeHolder: 'Where does the lock page live?',
  });
  if (!driver) return undefined;
  const me =
    identity ??
    (
      await gitIn(root)
        .raw(['config', '--get', 'user.email'])
        .catch(() => '')
    ).trim();
  const operators = await vscode.window.showInputBox({
    title: 'Lockstep: Initialise Container (2/3)',
    prompt: 'Operators (comma-separated identities) — they may clear a lock whose holder went silent',
    value: me,
    validateInput: v => (v.split(',').some(o => o.trim() !== '') ? undefined : 'Name at least one operator'),
  });
  if (operators === undefined) return undefined;
  const current = (
    await gitIn(root)
      .raw(['symbolic-ref', '--quiet', '--short', 'HEAD'])
      .catch(() => '')
  ).trim();
  const branch = await vscode.window.showInputBox({
    title: 'Lockstep: Initialise Container (3/3)',
    prompt: 'Protected branch — pushes to it need the lock',
    value: current || 'main',
    validateInput: v => (/^[A-Za-z0-9._/-]+$/.test(v.trim()) ? undefined : 'A branch name'),
  });
  if (branch === undefined) return undefined;
  return {
    driver: driver.driver,
    operators: operators
      .split(',')
      .map(o => o.trim())
      .filter(Boolean),
    protectedBranches: [branch.trim()],
  };
}
