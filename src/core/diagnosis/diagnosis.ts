import { formatClock, formatDuration } from '../format';

/**
 * `lockstep doctor` and VS Code's "Lockstep: Diagnose": what was found about a clone's Lockstep
 * set-up, each finding with the fix. The facts are gathered elsewhere (doctorFacts.ts, beside it);
 * this turns them into findings, purely. Nothing here ever holds a credential or a token.
 */

export type FindingLevel = 'ok' | 'info' | 'warning' | 'error';

export interface Finding {
  /** A short stable name: driver, cluster, page, session, client-hook, server-hook, server-settings, push-options, clock. */
  readonly check: string;
  readonly level: FindingLevel;
  readonly found: string;
  /** What to do about it; absent when nothing needs doing. */
  readonly fix?: string;
}

export interface DoctorFacts {
  readonly container:
    | {
        readonly ok: true;
        readonly id: string;
        readonly driver: string;
        readonly prefix: string;
        readonly location: string;
        readonly serverGuard: boolean;
        readonly remote: string;
      }
    | { readonly ok: false; readonly why: string; readonly kind?: 'not-initialised' | 'page-mismatch' | 'other' };
  /** Whether the store holds the container's page; `why` says what the read said otherwise. */
  readonly page?:
    | { readonly held: true; readonly grant: number }
    | { readonly held: false; readonly kind: 'no-page' | 'backend' | 'storage' | 'tampered' | 'other'; readonly why: string };
  /**
   * Whether the page's steps must be signed (allowedSigners in .lockstep.json; the git driver, and any driver that sets it), and whether
   * git has a signing key of a kind the page checks in this clone: SSH (gpg.format=ssh with user.signingkey or
   * gpg.ssh.defaultKeyCommand), or OpenPGP (user.signingkey) where the container lists openpgpSigners.
   */
  readonly signing?: {
    readonly required: boolean;
    readonly allowedSigners?: string;
    readonly openpgpSigners?: string;
    readonly key: boolean;
  };
  readonly identity?: string;
  /** This clone's session: its grant and the state it sees (with the lapse line, when lapsed). */
  readonly session?: { readonly grant: number; readonly state: string; readonly lapse?: string } | null;
  /** The page names this identity as live holder, and this clone has no token for that grant. */
  readonly heldWithoutToken?: { readonly grant: number; readonly expiresAt: number };
  /** An acquire of this clone whose write has not reached the page (yet): its grant. */
  readonly pendingAcquire?: { readonly grant: number };
  /** The pre-push hook: ours, none, or someone else's (ours not installed). */
  readonly clientHook?: 'installed' | 'missing' | 'foreign';
  /** For a local-path remote: the server guard found in it. */
  readonly serverHook?: {
    readonly preReceive: boolean;
    readonly pinned: boolean;
    readonly advertisesPushOptions: boolean;
    readonly stale?: string;
  };
  /** Whether the remote advertises push options (asked only when serverGuard is on); undefined when not learned. */
  readonly pushOptions?: boolean;
  /** Clock difference against the store (store minus this machine), where it could be measured. */
  readonly skew?: { readonly ms: number; readonly how: string } | { readonly unmeasured: string };
  /** etcd: the cluster as its members answer — how many, the majority a write needs, whether a leader answers; or why it could not be asked. */
  readonly cluster?: { readonly members: number; readonly quorum: number; readonly leaderSeen: boolean } | { readonly unanswered: string };
  /**
   * etcd: how the members are reached — `http` (no TLS), or `https` with the base names of the CA bundle
   * (LOCKSTEP_ETCD_CA_FILE; none: the system's authorities) and of the client certificate, if any. Names only.
   */
  readonly etcdTls?: { readonly scheme: 'http' } | { readonly scheme: 'https'; readonly caFile?: string; readonly certFile?: string };
}

/** Beyond this the leases' expiry (file, SQL) and the server's ±120 s check start to disagree. */
const SKEW_WARNING_MS = 5_000;

export function diagnose(facts: DoctorFacts): Finding[] {
  const out: Finding[] = [];
  const c = facts.container;
  if (!c.ok) {
    const fix =
      c.kind === 'page-mismatch'
        ? 'Unset the settings the message names (or make them match .lockstep.json): which lock page a container uses is committed, the environment supplies credentials only.'
        : c.kind === 'other'
          ? 'Read the message, fix the setting it names, and run lockstep doctor again.'
          : 'If a teammate has made this repository a container, pull it (git pull); otherwise run lockstep init in the repository (then commit .lockstep.json).';
    out.push({ check: 'container', level: 'error', found: c.why, fix });
    return out;
  }
  out.push({ check: 'container', level: 'ok', found: `container ${c.id}` });
  out.push({ check: 'driver', level: 'ok', found: `${c.driver} driver at ${c.location}, prefix ${c.prefix}` });
  if (facts.identity !== undefined) out.push({ check: 'identity', level: 'ok', found: `you are ${facts.identity}` });
  const cluster = facts.cluster;
  if (cluster && 'unanswered' in cluster) {
    out.push({
      check: 'cluster',
      level: 'error',
      found: `the etcd cluster did not say who leads it: ${cluster.unanswered}`,
      fix: 'Reach the members listed in LOCKSTEP_ETCD_ENDPOINTS (etcdctl endpoint status --cluster shows each one), then run lockstep doctor again.',
    });
  } else if (cluster?.leaderSeen) {
    out.push({
      check: 'cluster',
      level: 'ok',
      found: `etcd cluster of ${cluster.members} member(s) with a leader; every write is committed on a majority of ${cluster.quorum}, so a failover keeps every grant`,
    });
  } else if (cluster) {
    out.push({
      check: 'cluster',
      level: 'error',
      found: `the etcd cluster of ${cluster.members} member(s) has no leader: fewer than ${cluster.quorum} members reach each other, so it takes no write`,
      fix: `Start members until ${cluster.quorum} of ${cluster.members} run and reach each other (etcdctl endpoint status --cluster shows the leader).`,
    });
  }

  const tls = facts.etcdTls;
  if (tls?.scheme === 'https') {
    const ca =
      tls.caFile === undefined
        ? "the system's certificate authorities (LOCKSTEP_ETCD_CA_FILE names none)"
        : `the certificate authority in ${tls.caFile} (LOCKSTEP_ETCD_CA_FILE)`;
    const client = tls.certFile === undefined ? '' : `; this client shows the certificate in ${tls.certFile} (LOCKSTEP_ETCD_CERT_FILE)`;
    out.push({ check: 'tls', level: 'ok', found: `https:// endpoints; the members' certificates are checked against ${ca}${client}` });
  } else if (tls) {
    out.push({
      check: 'tls',
      level: 'info',
      found: 'http:// endpoints: no TLS, so the lock traffic (and a password in LOCKSTEP_ETCD_ENDPOINTS) crosses the network readable',
      fix: "Across machines, start the members with --cert-file and --key-file, write https:// endpoints, and name your team's certificate authority in LOCKSTEP_ETCD_CA_FILE.",
    });
  }

  const p = facts.page;
  if (p?.held) out.push({ check: 'page', level: 'ok', found: `the store holds the container's lock page (last grant #${p.grant})` });
  else if (p) {
    const fix =
      p.kind === 'no-page'
        ? 'Point LOCKSTEP_PATH / LOCKSTEP_PREFIX / LOCKSTEP_DRIVER (or the lockstep.store settings) at the store .lockstep.json names; a lost page is recreated by an operator with lockstep adopt.'
        : p.kind === 'backend'
          ? 'Start or reach the store (network, credentials in LOCKSTEP_REDIS_URL / LOCKSTEP_DATABASE_URL / LOCKSTEP_ETCD_ENDPOINTS), then run lockstep doctor again.'
          : p.kind === 'tampered'
            ? "Find who wrote the named step (the remote's or the store's logs), then an operator repairs the page with a signed lockstep adopt --reason TEXT --grant N --next-id N (N above the highest grant and identifier anyone has seen). A page set back below a grant this clone has seen is removed from the store first, then adopted the same way."
            : p.kind === 'storage'
              ? 'Stop the clones that use the page and note the highest grant anyone has seen (with the git driver, lockstep audit --history still reads the lock ref). Then restore the store from a backup taken after that grant, or remove the damaged record (file driver: the folder <store path>/<sha256 of the prefix>; README, "Damaged records"), and an operator runs lockstep adopt --grant N --next-id N above what was seen.'
              : 'Read the message, fix the setting it names, and run lockstep doctor again.';
    out.push({ check: 'page', level: 'error', found: p.why, fix });
  }

  const g = facts.signing;
  if (g && !g.required) {
    out.push({
      check: 'signing',
      level: 'info',
      found:
        "the lock page's steps are not signed: an identity on the page is declared, not proven (anyone who can push the lock ref can write any name)",
      fix: 'To prove them: everyone sets a signing key (SSH: git config --global gpg.format ssh; git config --global user.signingkey ~/.ssh/id_ed25519.pub), an operator lands an allowed_signers file (one line per person: identity, then public key) and "allowedSigners": "PATH" in .lockstep.json on the protected branch, then runs a signed lockstep adopt, which restarts the page\'s history signed. People may sign with GPG instead (git config --global gpg.format openpgp; git config --global user.signingkey FINGERPRINT): the operator also lands "openpgpSigners" (identity, then primary key fingerprint, one per line) and "openpgpKeys" (gpg --armor --export FPR …).',
    });
  } else if (g?.key) {
    out.push({
      check: 'signing',
      level: 'ok',
      found: `the lock page's steps are signed and checked against ${g.allowedSigners}; git has a signing key here`,
    });
  } else if (g) {
    out.push({
      check: 'signing',
      level: 'error',
      found: `the lock page's steps must be signed (allowedSigners: ${g.allowedSigners}${g.openpgpSigners !== undefined ? `; openpgpSigners: ${g.openpgpSigners}` : ''}), and git has no ${g.openpgpSigners !== undefined ? 'SSH or GPG' : 'SSH'} signing key in this clone: every write is refused`,
      fix:
        `SSH: git config --global gpg.format ssh; git config --global user.signingkey ~/.ssh/id_ed25519.pub — and an operator lists that public key for your identity in ${g.allowedSigners} on the protected branch.` +
        (g.openpgpSigners !== undefined
          ? ` Or GPG: git config --global gpg.format openpgp; git config --global user.signingkey FINGERPRINT — and an operator lists its fingerprint for your identity in ${g.openpgpSigners} and lands its public key (gpg --armor --export FINGERPRINT) in openpgpKeys.`
          : ' (GPG keys sign only where the container lists openpgpSigners and openpgpKeys.)'),
    });
  }

  const s = facts.session;
  if (s === null) out.push({ check: 'session', level: 'ok', found: 'this clone holds no session (it has not acquired, or it released)' });
  else if (s !== undefined) {
    if (s.lapse !== undefined) {
      out.push({
        check: 'session',
        level: 'warning',
        found: `this clone's session is grant #${s.grant}, and ${s.lapse} (state ${s.state})`,
        fix: 'Acquire again to push the work under a new grant, or drop the session on purpose with lockstep forget.',
      });
    } else {
      out.push({ check: 'session', level: 'ok', found: `this clone's session is grant #${s.grant} (state ${s.state})` });
    }
  }

  if (facts.pendingAcquire) {
    out.push({
      check: 'session',
      level: 'warning',
      found: `an acquire of this clone (grant #${facts.pendingAcquire.grant}) was interrupted before the store answered, and the page does not show it (yet)`,
      fix: 'lockstep acquire finishes it (it is the same attempt); it is dropped by itself once that grant goes to someone else.',
    });
  }
  if (facts.heldWithoutToken) {
    const h = facts.heldWithoutToken;
    out.push({
      check: 'session',
      level: 'warning',
      found: `the page names you the holder of grant #${h.grant} (until ${formatClock(h.expiresAt)}), but this clone has no token for it`,
      fix: `Work and release in the clone or window that acquired it. If that clone is gone, nobody can use grant #${h.grant}: it ends at ${formatClock(h.expiresAt)} (then the queue head, or anyone, may acquire), or an operator clears it once it is silent.`,
    });
  }

  if (facts.clientHook === 'installed')
    out.push({ check: 'client-hook', level: 'ok', found: 'the pre-push guard is installed in this clone' });
  else if (facts.clientHook === 'missing')
    out.push({
      check: 'client-hook',
      level: 'warning',
      found: 'no pre-push guard in this clone: nothing stops a push to a protected branch here',
      fix: 'lockstep hooks install',
    });
  else if (facts.clientHook === 'foreign')
    out.push({
      check: 'client-hook',
      level: 'warning',
      found: "a pre-push hook that is not Lockstep's is installed",
      fix: 'lockstep hooks install (keeps that hook and runs it first)',
    });

  const sh = facts.serverHook;
  if (sh) {
    if (!sh.preReceive || !sh.pinned) {
      out.push({
        check: 'server-hook',
        level: c.serverGuard ? 'error' : 'warning',
        found: `the remote ${c.remote} has ${sh.preReceive ? 'a pre-receive guard without pinned settings' : 'no Lockstep pre-receive guard'}`,
        fix: `In the bare repository of ${c.remote}: lockstep hooks install --server`,
      });
    } else {
      out.push({ check: 'server-hook', level: 'ok', found: `the remote ${c.remote} runs the server guard with pinned settings` });
      if (sh.stale !== undefined) {
        out.push({
          check: 'server-settings',
          level: 'warning',
          found: sh.stale,
          fix: `In the bare repository of ${c.remote}: lockstep hooks install --server (with the same options as before), then lockstep hooks status --server.`,
        });
      }
    }
  }
  if (c.serverGuard) {
    const advertised = facts.pushOptions ?? sh?.advertisesPushOptions;
    if (advertised === true)
      out.push({
        check: 'push-options',
        level: 'ok',
        found: `the remote ${c.remote} advertises push options (the proof of grant can travel)`,
      });
    else if (advertised === false) {
      out.push({
        check: 'push-options',
        level: 'error',
        found: `serverGuard is on, and the remote ${c.remote} does not advertise push options: every protected push will be refused`,
        fix: 'In the bare repository: lockstep hooks install --server (it sets receive.advertisePushOptions), or git config receive.advertisePushOptions true',
      });
    } else
      out.push({
        check: 'push-options',
        level: 'info',
        found: `whether the remote ${c.remote} advertises push options could not be learned`,
      });
  }

  const k = facts.skew;
  if (k && 'ms' in k) {
    const off = Math.abs(k.ms);
    out.push(
      off > SKEW_WARNING_MS
        ? {
            check: 'clock',
            level: 'warning',
            found: `this machine's clock is ${formatDuration(off)} ${k.ms > 0 ? 'behind' : 'ahead of'} the store (${k.how})`,
            fix: 'Synchronise the clocks (NTP) of every machine that uses this store.',
          }
        : { check: 'clock', level: 'ok', found: `clock within ${formatDuration(SKEW_WARNING_MS)} of the store (${k.how})` },
    );
  } else if (k) out.push({ check: 'clock', level: 'info', found: `clock skew not measured: ${k.unmeasured}` });
  return out;
}
