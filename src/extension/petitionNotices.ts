import * as vscode from 'vscode';
import { petitionMessage, petitionsToTell } from '../core/application';
import { CommandIds } from './commandIds';
import type { ContainerModel } from './containerModel';
import type { Log } from './log';
import { readSettings } from './settings';
import type { WorkspaceModel } from './workspaceModel';

/**
 * The holder hears of each new petition once (core decides which: {@link petitionsToTell}): a
 * notification with the petitioner's note and two ways on — Push and Release, Open Lock Page. The
 * setting lockstep.notifyPetitions turns the notifications off; the badge's "N waiting" stays.
 */
export class PetitionNotices implements vscode.Disposable {
  private readonly told = new Set<string>();
  private readonly disposables: vscode.Disposable[];

  constructor(
    workspace: WorkspaceModel,
    private readonly log: Log,
  ) {
    this.disposables = [workspace.onDidChangeAnyModel(model => this.update(model))];
  }

  private update(model: ContainerModel): void {
    const due = petitionsToTell(model.status, this.told);
    if (due.length === 0) return;
    const notify = readSettings(model.folder.uri).notifyPetitions;
    for (const notice of due) {
      this.told.add(notice.key);
      this.log.info(
        `${model.folder.name}: ${notice.petition.identity} petitioned for the lock (${notice.waiting} waiting)${notify ? '' : '; lockstep.notifyPetitions is off'}`,
      );
      if (!notify) continue;
      void vscode.window.showInformationMessage(petitionMessage(notice), 'Push and Release', 'Open Lock Page').then(choice => {
        if (choice === 'Push and Release') void vscode.commands.executeCommand(CommandIds.pushAndRelease);
        else if (choice === 'Open Lock Page') void vscode.commands.executeCommand(CommandIds.showLockPage);
      });
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
