import { connect } from 'node:net';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { DEMO_USERS } from '@/db/seed/demo';
import { API } from './support/api';
import { mintKey, signInOverHttp } from './support/session';

/**
 * The export's body on the production server (issue 17): a body that stops arriving is
 * the client's 408 (it was the server's 503, with an error line in its log), and neither
 * it nor a malformed body spends the key's export quota.
 */

let http: APIRequestContext;
let key: string;
let baseURL: string;

test.beforeAll(async ({ playwright }, testInfo) => {
  baseURL = testInfo.project.use.baseURL!;
  http = await playwright.request.newContext({ baseURL });
  await signInOverHttp(http, DEMO_USERS.alice.email);
  key = (await mintKey(http, `export body ${Date.now()}`)).key;
});
test.afterAll(async () => {
  await http?.dispose();
});

/** Sends the headers and the start of a body, then nothing: the raw answer, or '' if none came. */
function stalledExport(waitMs: number): Promise<string> {
  const { hostname, port } = new URL(baseURL);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(answer);
    }, waitMs);
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      if (answer) resolve(answer);
      else reject(error);
    });
    socket.write(
      `POST ${API}/contracts/export HTTP/1.1\r\nHost: ${hostname}:${port}\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 40\r\nConnection: close\r\n\r\n{"status":`,
    );
  });
}

const remaining = async () => {
  const res = await http.post(`${API}/contracts/export`, { headers: { 'X-API-Key': key }, data: '{"status":"completed"}' });
  expect(res.status()).toBe(200);
  return Number(res.headers()['x-ratelimit-remaining']);
};

test('a stalled export body is a 408 request_timeout and spends no quota; nor does a malformed one', async () => {
  test.setTimeout(60_000);
  const before = await remaining();
  // REQUEST_DEADLINE_MS is 8 s by default: the body's own bound is as long.
  const answer = await stalledExport(25_000);
  expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  expect(answer).toContain('"code":"request_timeout"');
  for (const body of ['{"status":', '{"colour":"red"}']) {
    const res = await http.post(`${API}/contracts/export`, { headers: { 'X-API-Key': key }, data: body });
    expect(res.status()).toBe(400);
  }
  // One export since `before`: the stalled and the malformed bodies cost nothing.
  expect(await remaining()).toBe(before - 1);
});
