import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { systemClock, type Clock } from '../../src/core/clock';
import { Container } from '../../src/core/container/container';
import { readChain, storeChain } from '../../src/core/chain/chainLayout';
import { digestOf, stepMessage, type ChainStep } from '../../src/core/chain/signedChain';
import type { AuditLine, LockRecord } from '../../src/core/lockRecord';
import { keyDigest, namespaceDigest } from '../../src/core/names';
import { encodeRecord } from '../../src/core/recordCodec';
import { signMessage } from '../../src/core/stores/chainSignatures';
import { createFencingTeam, type CliResult, type FencingTeam, type TeamMember } from '../helpers/fencingFixture';
import { fileHand, type StoreHand } from '../helpers/signedChainAttacks';
import { SIGNING_TEAM, signWithSshKeys } from '../helpers/teamSigning';

/**
 * A long day on a signed page of the file driver (issue 25, follow-up): the page's audit near its
 * 256 KiB cap, and the holder heartbeating hundreds of times through the library (an injected clock,
 * no waiting). The window keeps hundreds of steps (layout 2: deltas), the heartbeats of a run take one
 * step (coalesced), and a reader who proved a step before — a clone asleep all along, the server
 * guard between two landings — still proves the page; dropping a step that is not a heartbeat still
 * reads tampered. Real ed25519 keys, ssh-keygen, git daemon and the server guard.
 */
describe('signed chain over a long hold (file driver; audit near its cap; 300 heartbeats)', function () {
  this.timeout(900_000);
  let team: FencingTeam;
  let alice: TeamMember, bob: TeamMember, ops: TeamMember;
  let keys: Record<string, string>;
  let key: string;
  let hand: StoreHand;

  const ok = (result: CliResult, what: string): any => {
    assert.equal(result.code, 0, `${what}: exit ${result.code}\n${result.stdout}${result.stderr}`);
    return result.json;
  };
  const status = (who: TeamMember) => team.lockstep(who.dir, ['status']);
  const chain = async () => {
    const read = readChain(await hand.top());
    assert.ok(read.ok, 'the store holds a signed chain');
    return read;
  };
  const forgetWitness = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const name of fs.readdirSync(dir))
      if (name.startsWith('verified-') || name.startsWith('witness-')) fs.unlinkSync(path.join(dir, name));
  };
  /** alice's library handle, its clock a millisecond ahead of the last time it gave (never waiting for real time). */
  async function aliceContainer(): Promise<Container> {
    let last = 0;
    const clock: Clock = { ...systemClock, now: () => (last = Math.max(Date.now(), last + 1)) };
    return Container.open({ cwd: alice.dir, env: { ...team.env, LOCKSTEP_IDENTITY: alice.identity }, clock });
  }
  async function lands(who: TeamMember, name: string): Promise<CliResult> {
    await team.gitOk(who.dir, 'pull', '--quiet', '--no-rebase', 'origin', 'main');
    await team.commit(who, name);
    return team.git(who.dir, ['push', '--quiet', 'origin', 'HEAD:main'], { printsSecrets: true });
  }

  before(async () => {
    team = await createFencingTeam({
      ...SIGNING_TEAM,
      driver: 'file',
    });
    [alice, bob, ops] = team.members;
    key = keyDigest('lockstep', `container:${team.container}`);
    hand = fileHand(path.join(team.store, namespaceDigest('lockstep'), key.slice(0, 2), `r${key}`));
    keys = await signWithSshKeys(team, [alice, bob, ops], ops, [alice, bob]);
  });
  after(() => team?.dispose());

  it("a page whose audit is near its cap: the operator's checkpoint, then the guard", async () => {
    ok(await team.lockstep(ops.dir, ['adopt', '--reason', 'signing turned on', '--grant', '0', '--next-id', '1']), 'ops adopts');
    // The page as after a long history: ~470 old transitions of ~520 bytes under the operator's line,
    // kept as a checkpoint the operator signs (a compaction snapshot; no reader has a witness yet).
    const tip = (await chain()).steps.at(-1)!;
    const record = JSON.parse(tip.r) as LockRecord;
    const old: AuditLine[] = Array.from({ length: 470 }, (_, i) => ({
      at: record.audit[0].at - 470_000 + i * 1000,
      who: alice.identity,
      action: 'release',
      grant: 0,
      outcome: 'done',
      detail: `nothing landed ${'n'.repeat(440)} ${i}`,
    }));
    const r = encodeRecord({ ...record, audit: [...old, ...record.audit] });
    assert.ok(r.length > 240 * 1024, `the audit is near its cap (${r.length} bytes)`);
    const p = digestOf(tip.r);
    await hand.writeTop(storeChain([{ p, r, s: await signMessage(keys.ops, stepMessage(key, p, r)) }]));
    for (const who of [alice, bob, ops]) forgetWitness(path.join(who.dir, '.git', 'lockstep'));
    for (const who of [alice, bob, ops]) assert.equal(ok(await status(who), `${who.name} proves the checkpoint`).holder, null);
    ok(await team.lockstep(team.remote, ['hooks', 'install', '--server']), 'install the server guard');
  });

  it('bob proves a step, sleeps while alice heartbeats 300 times and lands: bob and the guard still prove the page; the heartbeats took 2 steps', async () => {
    ok(await team.lockstep(alice.dir, ['acquire']), 'alice acquires');
    ok(await lands(alice, 'first.txt'), 'alice lands (the guard proves the page and keeps its witness)');
    const before = (await chain()).steps.length;
    const container = await aliceContainer();
    try {
      for (let i = 0; i < 300; i++) {
        await container.heartbeat();
        // bob looks once, at a heartbeat in the middle of the first run: his witness is then replaced.
        if (i === 9) assert.equal(ok(await status(bob), 'bob reads a heartbeat').holder.identity, alice.identity);
      }
    } finally {
      await container.close();
    }
    const after = await chain();
    // 256 heartbeats in one coalesced step, the other 44 in the next.
    assert.equal(after.steps.length, before + 2, `300 heartbeats took ${after.steps.length - before} steps`);
    assert.deepEqual(
      after.steps.slice(-2).map(s => s.h?.length),
      [256, 44],
    );
    const bytes = JSON.stringify(await hand.top()).length;
    assert.equal(ok(await status(bob), 'bob, whose witness was a replaced heartbeat, proves the page').holder.identity, alice.identity);
    ok(await lands(alice, 'second.txt'), 'alice lands again: the guard, whose witness is her first landing, proves the page');
    assert.ok(bytes < 400 * 1024, `the page is ${bytes} bytes`);
  });

  it('the window keeps more than 100 steps beside the near-cap checkpoint (room for about 530); a dropped step that is no heartbeat reads tampered', async () => {
    const witnessed = (await chain()).steps.length;
    assert.equal(ok(await status(bob), 'bob reads').holder.identity, alice.identity);
    const container = await aliceContainer();
    try {
      // 60 identifiers minted, each followed by a heartbeat: 120 steps that do not coalesce.
      for (let i = 0; i < 60; i++) {
        await container.nextId();
        await container.heartbeat();
      }
    } finally {
      await container.close();
    }
    const c = await chain();
    const stored = await hand.top();
    const bytes = JSON.stringify(stored).length;
    assert.ok(c.steps.length >= 100, `the window keeps ${c.steps.length} steps`);
    assert.ok('r' in stored.steps[0] && stored.steps[0].r.length > 240 * 1024, 'its checkpoint is whole and near the audit cap');
    const beat = JSON.stringify(stored.steps.at(-1)).length;
    console.log(`      window: ${c.steps.length} steps, ${bytes} bytes; a heartbeat step stores ${beat} bytes`);
    assert.ok(c.steps.length > witnessed, 'bob is still within the window');
    // bob drops one of alice's minted identifiers (a step that is no heartbeat) after his witness.
    const at = c.steps.length - 4;
    assert.equal(JSON.parse(c.steps[at].r).audit.at(-1).action, 'next-id');
    const dropped: ChainStep[] = [...c.steps.slice(0, at), ...c.steps.slice(at + 1)];
    await hand.writeTop(storeChain(dropped));
    const read = await status(bob);
    assert.equal(read.code, 5, `tampered: ${read.stdout}${read.stderr}`);
    assert.equal(read.json.error.reason, 'tampered');
    assert.equal(read.json.error.revision, digestOf(c.steps[at + 1].r));
    assert.match(read.json.error.message, /does not continue the step before it/, read.json.error.message);
  });
});
