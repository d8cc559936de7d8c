import { createHash } from 'node:crypto';
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstashProxy, type UpstashProxy } from '../helpers/upstash-proxy';
import { TEST_REDIS_URL, redisReachable, uniqueId } from './support';

const reachable = await redisReachable();

/** The test proxy must speak the protocol the way @upstash/redis expects it. */
describe.skipIf(!reachable)('the Upstash REST test proxy', () => {
  let proxy: UpstashProxy;
  beforeAll(async () => {
    proxy = await startUpstashProxy({ redisUrl: TEST_REDIS_URL });
  });
  afterAll(() => proxy?.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${proxy.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${proxy.token}`, ...headers },
      body: JSON.stringify(body),
    });

  it('rejects a wrong token', async () => {
    const res = await post('/', ['PING'], { authorization: 'Bearer wrong' });
    expect(res.status).toBe(401);
    const client = new Redis({ url: proxy.url, token: 'wrong', enableTelemetry: false, retry: false });
    await expect(client.get('x')).rejects.toThrow();
  });

  it('answers one command, base64-encoding strings only when asked', async () => {
    const key = uniqueId('proxy');
    expect(await (await post('/', ['SET', key, 'héllo', 'PX', 10_000])).json()).toEqual({ result: 'OK' });
    expect(await (await post('/', ['GET', key])).json()).toEqual({ result: 'héllo' });
    expect(await (await post('/', ['GET', key], { 'Upstash-Encoding': 'base64' })).json()).toEqual({
      result: Buffer.from('héllo').toString('base64'),
    });
    expect(await (await post('/', ['GET', `${key}-missing`], { 'Upstash-Encoding': 'base64' })).json()).toEqual({
      result: null,
    });
    const bad = await post('/', ['NOSUCHCOMMAND']);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/unknown command/i);
  });

  it('runs /pipeline and /multi-exec, arrays encoded element by element', async () => {
    const key = uniqueId('proxy');
    const pipeline = await post(
      '/pipeline',
      [['INCRBY', key, 2], ['PEXPIRE', key, 10_000], ['MGET', key, 'nothing-here'], ['BOGUS']],
      { 'Upstash-Encoding': 'base64' },
    );
    const replies = (await pipeline.json()) as unknown[];
    expect(replies.slice(0, 3)).toEqual([{ result: 2 }, { result: 1 }, { result: [Buffer.from('2').toString('base64'), null] }]);
    expect(replies[3]).toHaveProperty('error');
    expect(await (await post('/multi-exec', [['INCR', key], ['GET', key]])).json()).toEqual([
      { result: 3 },
      { result: '3' },
    ]);
    const aborted = await post('/multi-exec', [['INCR', key], ['BOGUS']]);
    expect(aborted.status).toBe(400);
    expect(((await aborted.json()) as { error: string }).error).toMatch(/EXECABORT/);
  });

  it('accepts scripts with the #!lua shebang, and EVALSHA by the sha of what was sent', async () => {
    const client = new Redis({ url: proxy.url, token: proxy.token, enableTelemetry: false });
    const script = '#!lua flags=allow-key-locking\nreturn ARGV[1]';
    await expect(client.evalsha('0'.repeat(40), [], ['x'])).rejects.toThrow(/NOSCRIPT/);
    expect(await client.eval(script, [], ['hi'])).toBe('hi');
    expect(await client.evalsha(createHash('sha1').update(script).digest('hex'), [], ['again'])).toBe('again');
  });
});
