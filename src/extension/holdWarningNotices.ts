import * as vscode from 'vscode';
import { type Clock, type HoldFacts, holdWarningMessage, LockState, planHoldWarnings, systemClock, type Timer } from '../core/application';
import { CommandIds } from './commandIds';
import type { ContainerModel } from './containerModel';
import type { Log } from './log';
import type { WorkspaceModel } from './workspaceModel';

/**
 * Warnings before it is too late, for the holder: 15 minutes before the lease ends while heartbeats fail,
 * 30 minutes before the 24-hour cap. Core decides which fall due and when ({@link planHoldWarnings}); this
 * class remembers what the model last knew of the hold, shows the notifications and sets one timer per
 * container for the next one.
 */
export class HoldWarningNotices implements vscode.Disposable {
  private readonly holds = new Map<ContainerModel, HoldFacts>();
  private readonly timers = new Map<ContainerModel, Timer>();
  private readonly shown = new Set<string>();
  private readonly disposables: vscode.Disposable[];

  constructor(
    workspace: WorkspaceModel,
    private readonly log: Log,
    private readonly clock: Clock = systemClock,
  ) {
    this.disposables = [workspace.onDidChangeAnyModel(model => this.update(model))];
  }

  private update(model: ContainerModel): void {
    const source = model.source;
    const status = model.status;
    const known = this.holds.get(model);
    if (status?.state === LockState.HeldByMe && status.holder) {
      this.holds.set(model, { ...status.holder, heartbeatFailing: false });
    } else if (source.kind === 'offline' && known) {
      // The store is unreachable while we hold: the heartbeats fail; the expiry we last confirmed stands.
      this.holds.set(model, { ...known, heartbeatFailing: true });
    } else if (source.kind !== 'loading') {
      this.holds.delete(model);
    }
    this.plan(model);
  }

  private plan(model: ContainerModel): void {
    this.timers.get(model)?.cancel();
    this.timers.delete(model);
    const hold = this.holds.get(model);
    const now = this.clock.now();
    const { due, nextAt } = planHoldWarnings(hold, this.shown, now);
    for (const warning of due) {
      this.shown.add(warning.key);
      this.log.warn(`${model.folder.name}: ${warning.kind} warning for grant #${warning.grant}`);
      void vscode.window.showWarningMessage(holdWarningMessage(warning, now), 'Push and Release').then(choice => {
        if (choice) void vscode.commands.executeCommand(CommandIds.pushAndRelease);
      });
    }
    if (nextAt !== undefined)
      this.timers.set(
        model,
        this.clock.setTimer(nextAt - now, () => this.plan(model)),
      );
  }

  dispose(): void {
    for (const t of this.timers.values()) t.cancel();
    for (const d of this.disposables) d.dispose();
  }
}
