import * as assert from 'node:assert/strict';
import { diagnose, type DoctorFacts } from '../../src/core/diagnosis/diagnosis';
import { formatDuration } from '../../src/core/format';

const container = {
  ok: true as const,
  id: '8bd7',
  driver: 'file',
  prefix: 'lockstep',
  location: '/srv/locks',
  serverGuard: true,
  remote: 'origin',
};

describe('doctor: findings from facts, each problem with its fix', () => {
  it('a healthy clone: every finding ok or info, none with a fix', () => {
    const findings = diagnose({
      container,
      identity: 'ana@example.com',
      page: { held: true, grant: 3 },
      session: null,
      clientHook: 'installed',
      serverHook: { preReceive: true, pinned: true, advertisesPushOptions: true },
      skew: { ms: 20, how: 'probe' },
    });
    assert.deepEqual(
      findings.map(f => f.check),
      ['container', 'driver', 'identity', 'page', 'session', 'client-hook', 'server-hook', 'push-options', 'clock'],
    );
    assert.ok(
      findings.every(f => f.level === 'ok' && f.fix === undefined),
      JSON.stringify(findings),
    );
  });

  it('names each problem with a fix: no page, lapsed session, no hooks, no push options, skewed clock', () => {
    const facts: DoctorFacts = {
      container,
      page: { held: false, kind: 'no-page', why: 'This store holds no lock page' },
      session: { grant: 2, state: 'stale', lapse: 'your lease #2 expired at 14:05 UTC' },
      clientHook: 'missing',
      serverHook: { preReceive: false, pinned: false, advertisesPushOptions: false },
      skew: { ms: -90_000, how: 'probe' },
    };
    const byCheck = new Map(diagnose(facts).map(f => [f.check, f]));
    assert.equal(byCheck.get('page')?.level, 'error');
    assert.match(byCheck.get('page')?.fix ?? '', /LOCKSTEP_PATH.*lockstep adopt/);
    assert.match(byCheck.get('session')?.fix ?? '', /lockstep forget/);
    assert.equal(byCheck.get('client-hook')?.fix, 'lockstep hooks install');
    assert.equal(byCheck.get('server-hook')?.level, 'error', 'serverGuard on without a server guard');
    assert.match(byCheck.get('push-options')?.fix ?? '', /receive\.advertisePushOptions/);
    assert.match(byCheck.get('clock')?.found ?? '', new RegExp(`${formatDuration(90_000)} ahead of the store`));
  });

  it('an etcd cluster: ok with a leader (the majority named), an error with a fix without one or unanswered', () => {
    const etcd = { ...container, driver: 'etcd', location: 'http://10.0.0.1:2379,http://10.0.0.2:2379,http://10.0.0.3:2379' };
    const finding = (cluster: DoctorFacts['cluster']) => diagnose({ container: etcd, cluster }).find(f => f.check === 'cluster');
    const led = finding({ members: 3, quorum: 2, leaderSeen: true });
    assert.equal(led?.level, 'ok');
    assert.match(led?.found ?? '', /3 member\(s\) with a leader.*majority of 2/);
    const leaderless = finding({ members: 3, quorum: 2, leaderSeen: false });
    assert.equal(leaderless?.level, 'error');
    assert.match(leaderless?.fix ?? '', /until 2 of 3 run/);
    const unanswered = finding({ unanswered: 'No etcd member answered (UNAVAILABLE)' });
    assert.equal(unanswered?.level, 'error');
    assert.match(unanswered?.fix ?? '', /LOCKSTEP_ETCD_ENDPOINTS/);
    assert.equal(
      diagnose({ container }).find(f => f.check === 'cluster'),
      undefined,
      'no cluster finding for a driver without one',
    );
  });

  it('etcd TLS: the CA and client certificate by file name, the system authorities when none is named, plain http as info', () => {
    const etcd = { ...container, driver: 'etcd', location: 'https://10.0.0.1:2379' };
    const finding = (etcdTls: DoctorFacts['etcdTls']) => diagnose({ container: etcd, etcdTls }).find(f => f.check === 'tls');
    const named = finding({ scheme: 'https', caFile: 'team-ca.pem', certFile: 'ana.pem' });
    assert.equal(named?.level, 'ok');
    assert.match(
      named?.found ?? '',
      /against the certificate authority in team-ca\.pem \(LOCKSTEP_ETCD_CA_FILE\); this client shows the certificate in ana\.pem/,
    );
    assert.match(finding({ scheme: 'https' })?.found ?? '', /the system's certificate authorities \(LOCKSTEP_ETCD_CA_FILE names none\)/);
    const plain = finding({ scheme: 'http' });
    assert.equal(plain?.level, 'info');
    assert.match(plain?.fix ?? '', /LOCKSTEP_ETCD_CA_FILE/);
    assert.equal(finding(undefined), undefined, 'no TLS finding for a driver without one');
  });

  it('stale pinned settings of the server guard: a warning that names them, with the install as the fix', () => {
    const stale = "The server guard's pinned settings are stale: .lockstep.json on main differs from them in protectedBranches";
    const byCheck = new Map(
      diagnose({ container, serverHook: { preReceive: true, pinned: true, advertisesPushOptions: true, stale } }).map(f => [f.check, f]),
    );
    assert.equal(byCheck.get('server-hook')?.level, 'ok');
    assert.equal(byCheck.get('server-settings')?.level, 'warning');
    assert.equal(byCheck.get('server-settings')?.found, stale);
    assert.match(byCheck.get('server-settings')?.fix ?? '', /lockstep hooks install --server/);
  });

  it('signing: declared identities are said (info, with how to sign); a signed page without a key here is an error; a tampered page names the repair', () => {
    const git = { ...container, driver: 'git' };
    const declared = new Map(diagnose({ container: git, signing: { required: false, key: false } }).map(f => [f.check, f]));
    assert.equal(declared.get('signing')?.level, 'info');
    assert.match(declared.get('signing')?.found ?? '', /declared, not proven/);
    assert.match(declared.get('signing')?.fix ?? '', /gpg\.format ssh.*user\.signingkey.*allowedSigners.*lockstep adopt/);
    const noKey = new Map(
      diagnose({ container: git, signing: { required: true, allowedSigners: '.lockstep/allowed_signers', key: false } }).map(f => [
        f.check,
        f,
      ]),
    );
    assert.equal(noKey.get('signing')?.level, 'error');
    assert.match(noKey.get('signing')?.fix ?? '', /user\.signingkey/);
    const signed = new Map(
      diagnose({ container: git, signing: { required: true, allowedSigners: '.lockstep/allowed_signers', key: true } }).map(f => [
        f.check,
        f,
      ]),
    );
    assert.equal(signed.get('signing')?.level, 'ok');
    const tampered = new Map(
      diagnose({ container: git, page: { held: false, kind: 'tampered', why: 'The lock page is tampered' } }).map(f => [f.check, f]),
    );
    assert.match(tampered.get('page')?.fix ?? '', /signed lockstep adopt/);
  });

  it('signing: both set-ups are named — GPG as an alternative where the container lists openpgpSigners, as SSH-only otherwise', () => {
    const git = { ...container, driver: 'git' };
    const finding = (signing: Parameters<typeof diagnose>[0]['signing']) =>
      diagnose({ container: git, signing }).find(f => f.check === 'signing');
    assert.match(finding({ required: false, key: false })?.fix ?? '', /gpg\.format openpgp.*openpgpSigners.*openpgpKeys/);
    const listed = finding({
      required: true,
      allowedSigners: '.lockstep/allowed_signers',
      openpgpSigners: '.lockstep/openpgp_signers',
      key: false,
    });
    assert.equal(listed?.level, 'error');
    assert.match(listed?.found ?? '', /no SSH or GPG signing key/);
    assert.match(listed?.fix ?? '', /gpg\.format ssh.*Or GPG: git config --global gpg\.format openpgp.*\.lockstep\/openpgp_signers/);
    const sshOnly = finding({ required: true, allowedSigners: '.lockstep/allowed_signers', key: false });
    assert.match(sshOnly?.found ?? '', /no SSH signing key/);
    assert.match(sshOnly?.fix ?? '', /GPG keys sign only where the container lists openpgpSigners/);
  });

  it('a folder that is no container: one finding, with how to make one', () => {
    const findings = diagnose({ container: { ok: false, why: 'No .lockstep.json here.' } });
    assert.equal(findings.length, 1);
    assert.match(findings[0].fix ?? '', /lockstep init/);
  });
});
