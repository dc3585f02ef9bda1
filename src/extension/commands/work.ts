import * as vscode from 'vscode';
import { MAX_IDS_PER_LEASE, spansText } from '../../core/application';
import { CommandIds } from '../commandIds';
import { activeModel, confirmIdentity, guarded, pickCoworker, requireTrust, type CommandContext } from './context';

/** Handing out work: identifier ranges and blocks (the lead), and minting identifiers (anyone with a range). */
export function registerWorkCommands(ctx: CommandContext): vscode.Disposable[] {
  const leaseIds = guarded(ctx, 'Lease identifiers', async (to?: string, count?: number) => {
    const model = activeModel(ctx);
    if (!model || !requireTrust(ctx)) return undefined;
    const who = typeof to === 'string' ? to : await pickCoworker(model, 'Lease identifiers to…');
    if (!who) return undefined;
    const newIdentity = await confirmIdentity(model, who);
    if (newIdentity === undefined) return undefined;
    const n =
      typeof count === 'number'
        ? count
        : Number(
            (await vscode.window.showInputBox({
              prompt: `How many identifiers for ${who}?`,
              value: '100',
              validateInput: v =>
                /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= MAX_IDS_PER_LEASE
                  ? undefined
                  : `A whole number from 1 to ${MAX_IDS_PER_LEASE}`,
            })) ?? NaN,
          );
    if (!Number.isFinite(n)) return undefined;
    const range = await model.act(c => c.leaseIds(who, n, newIdentity));
    void vscode.window.showInformationMessage(`Lockstep: identifiers ${spansText(range.spans)} leased to ${who}.`);
    return range;
  });

  const insertNextId = guarded(ctx, 'Insert next identifier', async () => {
    const model = activeModel(ctx);
    const editor = vscode.window.activeTextEditor;
    if (!model || !requireTrust(ctx)) return undefined;
    if (!editor) {
      void vscode.window.showInformationMessage('Lockstep: open an editor to insert an identifier at the cursor.');
      return undefined;
    }
    const { id } = await model.act(c => c.nextId());
    await editor.edit(edit => {
      for (const s of editor.selections) edit.replace(s, String(id));
    });
    return id;
  });

  const assignBlock = guarded(ctx, 'Assign block', async (to?: string, text?: string) => {
    const model = activeModel(ctx);
    if (!model || !requireTrust(ctx)) return undefined;
    const who = typeof to === 'string' ? to : await pickCoworker(model, 'Assign a block of work to…');
    if (!who) return undefined;
    const newIdentity = await confirmIdentity(model, who);
    if (newIdentity === undefined) return undefined;
    const block =
      typeof text === 'string'
        ? text
        : await vscode.window.showInputBox({
            prompt: `The block of work for ${who}`,
            validateInput: v => (v.trim() ? undefined : 'Describe the block'),
          });
    if (!block) return undefined;
    const { index } = await model.act(c => c.assign(who, block, newIdentity));
    void vscode.window.showInformationMessage(`Lockstep: block ${index} assigned to ${who}.`);
    return true;
  });

  const markBlockDone = guarded(ctx, 'Mark block done', async (id?: number) => {
    const model = activeModel(ctx);
    if (!model || !requireTrust(ctx)) return undefined;
    const blocks = model.status?.blocks ?? [];
    let block = typeof id === 'number' ? id : undefined;
    if (block === undefined) {
      if (blocks.length === 0) {
        void vscode.window.showInformationMessage('Lockstep: no open blocks on the lock page.');
        return undefined;
      }
      const picked = await vscode.window.showQuickPick(
        blocks.map(b => ({ label: `${b.id}. ${b.text}`, description: b.to, id: b.id })),
        { placeHolder: 'Which block is done?' },
      );
      block = picked?.id;
    }
    if (block === undefined) return undefined;
    const done = await model.act(c => c.markDone(block));
    void vscode.window.showInformationMessage(`Lockstep: block ${done.block} of ${done.to} is done.`);
    return done;
  });

  return [
    vscode.commands.registerCommand(CommandIds.leaseIds, leaseIds),
    vscode.commands.registerCommand(CommandIds.insertNextId, insertNextId),
    vscode.commands.registerCommand(CommandIds.assignBlock, assignBlock),
    vscode.commands.registerCommand(CommandIds.markBlockDone, markBlockDone),
  ];
}
