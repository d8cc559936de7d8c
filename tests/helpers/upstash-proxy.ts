import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import IORedis from 'ioredis';

/**
 * A small server speaking Upstash's REST protocol in front of a real Redis, so tests run
 * @upstash/redis (and its HTTP path) without the Upstash service:
 *
 * - POST /            body: one command as a JSON array       -> { result } | { error }
 * - POST /pipeline    body: array of commands, run in order   -> [{ result } | { error }, ...]
 * - POST /multi-exec  body: array of commands, in MULTI/EXEC  -> [{ result } | { error }, ...]
 * - `Authorization: Bearer <token>` is required (401 otherwise).
 * - `Upstash-Encoding: base64` base64-encodes string results; numbers, "OK" and null
 *   stay raw, arrays are encoded element by element.
 *
 * Upstash accepts the `#!lua flags=...` shebang that @upstash/ratelimit puts on its
 * scripts and caches a script under the sha of the text it was sent. Plain Redis rejects
 * the shebang, so the proxy strips it and translates EVALSHA from the sent sha to the
 * sha Redis knows.
 */
export interface UpstashProxy {
  url: string;
  token: string;
  /** Number of HTTP requests answered, by path. */
  requests: Record<string, number>;
  close(): Promise<void>;
}

type Reply = { result: unknown } | { error: string };

export async function startUpstashProxy(options: { redisUrl: string; token?: string }): Promise<UpstashProxy> {
  const token = options.token ?? randomBytes(16).toString('hex');
  const redis = new IORedis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const redisShaOf = new Map<string, string>();
  const requests: Record<string, number> = {};

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => send(res, 500, { error: String(error) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = new URL(req.url ?? '/', 'http://proxy').pathname;
    requests[path] = (requests[path] ?? 0) + 1;
    if (req.method !== 'POST') return send(res, 405, { error: 'Method not allowed' });
    if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'Unauthorized' });
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return send(res, 400, { error: 'ERR failed to parse the request body as JSON' });
    }
    const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
    const encode = (reply: Reply): Reply => ('result' in reply && base64 ? { result: encodeResult(reply.result) } : reply);

    if (path === '/') {
      if (!isCommand(body)) return send(res, 400, { error: 'ERR the body must be a JSON array command' });
      const reply = await run(body);
      return send(res, 'error' in reply ? 400 : 200, encode(reply));
    }
    if (path === '/pipeline' || path === '/multi-exec') {
      if (!Array.isArray(body) || !body.every(isCommand)) {
        return send(res, 400, { error: 'ERR the body must be a JSON array of commands' });
      }
      const replies = path === '/pipeline' ? await runInOrder(body) : await runTransaction(body);
      if (!Array.isArray(replies)) return send(res, 400, replies);
      return send(res, 200, replies.map(encode));
    }
    return send(res, 404, { error: `Unknown path ${path}` });
  }

  async function run(command: unknown[]): Promise<Reply> {
    try {
      const [name, ...args] = translate(command);
      return { result: await redis.call(name, ...args) };
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }

  async function runInOrder(commands: unknown[][]): Promise<Reply[]> {
    const replies: Reply[] = [];
    for (const command of commands) replies.push(await run(command));
    return replies;
  }

  /** MULTI/EXEC; a transaction Redis aborts as a whole (EXECABORT) is one error. */
  async function runTransaction(commands: unknown[][]): Promise<Reply[] | { error: string }> {
    const transaction = redis.multi();
    for (const command of commands) transaction.call(...translate(command));
    try {
      const results = await transaction.exec();
      return (results ?? []).map(([error, result]) => (error ? { error: error.message } : { result }));
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Command as strings for Redis, with Upstash's script handling emulated. */
  function translate(command: unknown[]): [string, ...string[]] {
    const [name = '', ...rest] = command.map((part) => (typeof part === 'string' ? part : JSON.stringify(part)));
    const upper = name.toUpperCase();
    if ((upper === 'EVAL' || upper === 'EVAL_RO') && rest[0] !== undefined) {
      rest[0] = loadable(rest[0]);
    } else if ((upper === 'EVALSHA' || upper === 'EVALSHA_RO') && rest[0] !== undefined) {
      rest[0] = redisShaOf.get(rest[0]) ?? rest[0];
    } else if (upper === 'SCRIPT' && rest[0]?.toUpperCase() === 'LOAD' && rest[1] !== undefined) {
      rest[1] = loadable(rest[1]);
    }
    return [name, ...rest];
  }

  function loadable(script: string): string {
    const stripped = script.startsWith('#!lua') ? script.slice(script.indexOf('\n') + 1) : script;
    redisShaOf.set(sha1(script), sha1(stripped));
    return stripped;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
    },
  };
}

function isCommand(value: unknown): value is unknown[] {
  return Array.isArray(value) && value.length > 0 && typeof value[0] === 'string';
}

function encodeResult(result: unknown): unknown {
  if (Array.isArray(result)) return result.map(encodeResult);
  if (typeof result === 'string' && result !== 'OK') return Buffer.from(result, 'utf8').toString('base64');
  return result;
}

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
