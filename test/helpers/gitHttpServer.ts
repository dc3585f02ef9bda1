import { spawn } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The repositories under a folder served over smart HTTP by `git http-backend` (CGI) behind a small
 * Node server with basic authentication, on a loopback port: the server authenticates the pusher
 * and says so to the hooks in REMOTE_USER, as Apache or nginx in front of git would.
 */
export interface GitHttpServer {
  /** `http://USER:PASSWORD@127.0.0.1:PORT/<repo>` for one of the users. */
  urlFor(user: string, repo: string): string;
  /** `http://127.0.0.1:PORT/<repo>`: git must ask for the credentials (a credential helper, or askpass). */
  bareUrlFor(repo: string): string;
  /** Requests answered 401 (no or wrong credentials), and requests let through, so far. */
  readonly counts: { refused: number; authenticated: number };
  close(): Promise<void>;
}

export async function startGitHttpServer(root: string, users: Readonly<Record<string, string>>): Promise<GitHttpServer> {
  const counts = { refused: 0, authenticated: 0 };
  const server = http.createServer((request, response) => {
    const user = authenticated(request.headers.authorization, users);
    counts[user === undefined ? 'refused' : 'authenticated'] += 1;
    if (user === undefined) {
      response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="lockstep-test"' }).end();
      return;
    }
    const url = new URL(request.url ?? '/', 'http://localhost');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: root,
        REMOTE_USER: user,
        REMOTE_ADDR: '127.0.0.1',
        REQUEST_METHOD: request.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        ...(request.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(request.headers['content-encoding']) } : {}),
        ...(request.headers['git-protocol'] ? { GIT_PROTOCOL: String(request.headers['git-protocol']) } : {}),
        GATEWAY_INTERFACE: 'CGI/1.1',
        SERVER_PROTOCOL: 'HTTP/1.1',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    request.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const at = line.indexOf(':');
        if (at < 0) continue;
        const name = line.slice(0, at).trim();
        const value = line.slice(at + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      response.writeHead(status, headers);
      response.write(head.subarray(end + 4));
    });
    cgi.on('close', () => {
      if (!headersDone) response.writeHead(502).end();
      else response.end();
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    urlFor: (user, repo) => `http://${encodeURIComponent(user)}:${encodeURIComponent(users[user] ?? '')}@127.0.0.1:${port}/${repo}`,
    bareUrlFor: repo => `http://127.0.0.1:${port}/${repo}`,
    counts,
    close: () =>
      new Promise(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function authenticated(header: string | undefined, users: Readonly<Record<string, string>>): string | undefined {
  const match = /^Basic (.+)$/.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  const [user, password] = [decoded.slice(0, at), decoded.slice(at + 1)];
  return Object.hasOwn(users, user) && users[user] === password ? user : undefined;
}
