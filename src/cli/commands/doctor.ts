import { bareRepositoryFindings, diagnose, gatherDoctorFacts, isBareRepository } from '../../core/application';
import { parseCommandArgs } from '../args';
import type { Command } from '../command';

const MARK = { ok: 'ok  ', info: 'info', warning: 'warn', error: 'FAIL' } as const;

export const doctorCommand: Command = {
  name: 'doctor',
  summary: "check this clone's Lockstep set-up: store, page, session, hooks, push options, clock",
  help: `usage: lockstep doctor

Reports, read-only, each with a fix: the driver, the page's location (never a credential), prefix
and container; whether this store holds the container's page; this clone's session; which hooks
are installed (the client's, and for a local-path remote the server's); whether the remote
advertises push options when serverGuard is on; the clock skew against the store where it can be
measured (the file driver's folder). In the shared bare repository: the server guard, its pinned
settings and whether the store they pin holds the page. JSON: {findings: [{check, level, found, fix?}], healthy}.

Exit codes: 0 no finding is an error · 1 at least one is (the fix says what to do).`,

  async run(context) {
    parseCommandArgs(context.args, {});
    const facts = await gatherDoctorFacts({ cwd: context.cwd, env: context.env });
    // In the shared bare repository there is no clone: the server guard and the page it reads, as status shows there.
    const findings =
      !facts.container.ok && facts.container.kind === 'not-initialised' && (await isBareRepository(context.cwd))
        ? await bareRepositoryFindings(context.cwd, Date.now())
        : diagnose(facts);
    const healthy = findings.every(f => f.level !== 'error');
    const exit = healthy ? 0 : 1;
    context.out.result(
      findings.flatMap(f => [`${MARK[f.level]}  ${f.check}: ${f.found}`, ...(f.fix ? [`        fix: ${f.fix}`] : [])]),
      { findings, healthy },
      exit,
    );
    return exit;
  },
};
