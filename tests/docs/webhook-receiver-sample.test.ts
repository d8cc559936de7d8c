import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_SECRET_FORMAT } from '@/server/access/token-format';
import { exampleContract } from '@/server/contracts/example';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { RECEIVER_JS, RECEIVER_PY } from '@/server/rest/openapi-webhooks';
import { messageIdOf, payloadOf, signedHeaders, type OutboxEvent } from '@/server/webhooks/message';
import { sendWebhook } from '@/server/webhooks/sender';
import { PRIVATE_OK } from '../webhooks/support';

/**
 * The receivers the API reference shows (its introduction's Webhooks section) are run as a
 * reader would run them: the very text of the document, in a file of its own, given
 * deliveries that the app's signer (server/webhooks/message.ts) signs and its sender
 * (server/webhooks/sender.ts) posts. A genuine delivery is accepted (once per webhook-id),
 * a tampered body or another secret is refused.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const intro = String((buildOpenApiDocument('https://api.example.test').info as { description: string }).description);

/** A fenced block of the reference's Webhooks section, as the reader sees it. */
function sampleOf(lang: 'javascript' | 'python'): string {
  const section = intro.slice(intro.indexOf('\n## Webhooks'));
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```').exec(section);
  if (!block) throw new Error(`no ${lang} receiver in the reference's Webhooks section`);
  return block[1]!;
}

const secret = WEBHOOK_SECRET_FORMAT.generate();
const now = () => Math.floor(Date.now() / 1000);

/** A delivery as the worker makes it: the payload of an outbox event, signed with the endpoint's key. */
function delivery(event: OutboxEvent, key = secret): { body: string; headers: Record<string, string> } {
  const body = payloadOf(event);
  return { body, headers: signedHeaders([WEBHOOK_SECRET_FORMAT.keyOf(key)], messageIdOf(event.id), now(), body) };
}

const testEvent: OutboxEvent = {
  id: '6f1c2b0a-4d3e-4a5b-8c7d-9e0f1a2b3c4d',
  type: 'webhook.test',
  occurredAt: new Date(),
  contract: null,
  extra: { endpoint_id: '5d2c0f4e-3b8a-4c1d-9e7f-1a2b3c4d5e6f', message: 'A test event. Its contract is an example, not one of yours.', contract: exampleContract },
};
const deletedEvent: OutboxEvent = {
  id: '0a9b8c7d-6e5f-4a3b-9c1d-2e3f4a5b6c7d',
  type: 'contract.deleted',
  occurredAt: new Date(),
  contract: { id: exampleContract.id, organization_id: exampleContract.organization_id },
  extra: null,
};

let dir = '';
beforeAll(() => {
  // Inside the repository, so that the samples' `import 'standardwebhooks'` resolves.
  mkdirSync(path.join(ROOT, '.data'), { recursive: true });
  dir = mkdtempSync(path.join(ROOT, '.data', 'webhook-receiver-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the JavaScript receiver of the reference', () => {
  let child: ChildProcess;
  let output = '';
  let url: URL;

  beforeAll(async () => {
    const sample = sampleOf('javascript');
    expect(sample).toBe(RECEIVER_JS);
    const file = path.join(dir, 'receiver.mjs');
    writeFileSync(file, sample);
    child = spawn(process.execPath, [file], { env: { PATH: process.env.PATH, NODE_ENV: 'production', WEBHOOK_SECRET: secret, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const port = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the receiver did not start: ${output}`)), 15_000);
      const check = () => {
        const match = /listening on port (\d+)/.exec(output);
        if (match) return (clearTimeout(timer), resolve(match[1]!));
      };
      child.stdout!.on('data', check);
      child.on('exit', (code) => (clearTimeout(timer), reject(new Error(`the receiver exited (${code}): ${output}`))));
    });
    url = new URL(`http://127.0.0.1:${port}/webhooks/contracts`);
  });
  afterAll(() => {
    child?.kill();
  });

  const post = (d: { body: string; headers: Record<string, string> }) => sendWebhook(url, d.headers, d.body, { policy: PRIVATE_OK });
  const lines = () => output.split('\n').filter((line) => line && !line.startsWith('listening on port'));

  it('accepts a delivery signed by the app, and handles each webhook-id once', async () => {
    const test = delivery(testEvent);
    expect(await post(test)).toMatchObject({ ok: true, statusCode: 204 });
    // A retry: the same webhook-id and body, a fresh timestamp and signature.
    expect(await post(delivery(testEvent))).toMatchObject({ ok: true, statusCode: 204 });
    expect(await post(delivery(deletedEvent))).toMatchObject({ ok: true, statusCode: 204 });
    await expect.poll(lines).toEqual([`webhook.test ${exampleContract.title} `, `deleted ${exampleContract.id}`]);
  });

  it('refuses a tampered body, a stale timestamp and another secret', async () => {
    const before = lines().length;
    const genuine = delivery({ ...testEvent, id: '1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e' });
    const tampered = { ...genuine, body: genuine.body.replace(exampleContract.title, 'Forged title') };
    expect(tampered.body).not.toBe(genuine.body);
    expect(await post(tampered)).toMatchObject({ ok: false, statusCode: 400, response: 'bad signature' });
    const body = payloadOf(testEvent);
    const stale = { body, headers: signedHeaders([WEBHOOK_SECRET_FORMAT.keyOf(secret)], messageIdOf(testEvent.id), now() - 600, body) };
    expect(await post(stale)).toMatchObject({ ok: false, statusCode: 400 });
    expect(await post(delivery(testEvent, WEBHOOK_SECRET_FORMAT.generate()))).toMatchObject({ ok: false, statusCode: 400 });
    expect(lines().length).toBe(before);
    // The genuine one is still accepted.
    expect(await post(genuine)).toMatchObject({ ok: true, statusCode: 204 });
  });
});

/** The interpreter of the Python sample (PYTHON, else python3), when it has standardwebhooks and Flask. */
const python = process.env.PYTHON ?? 'python3';
const pythonReady = spawnSync(python, ['-c', 'import standardwebhooks, flask'], { stdio: 'ignore' }).status === 0;

const pythonTitle = pythonReady ? 'the Python receiver of the reference' : `the Python receiver of the reference (skipped: ${python} cannot import standardwebhooks and flask; set PYTHON to an interpreter that can)`;

describe.skipIf(!pythonReady)(pythonTitle, () => {
  it('accepts a delivery signed by the app and refuses a tampered body', () => {
    const sample = sampleOf('python');
    expect(sample).toBe(RECEIVER_PY);
    writeFileSync(path.join(dir, 'receiver.py'), sample);
    // Flask's test client posts the raw bytes and headers to the sample's app.
    const harness = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(dir)})`,
      'import receiver',
      'client = receiver.app.test_client()',
      'statuses = [client.post("/webhooks/contracts", data=d["body"].encode("utf-8"), headers=d["headers"]).status_code for d in json.load(sys.stdin)]',
      'print(json.dumps(statuses))',
    ].join('\n');
    const genuine = delivery(testEvent);
    const tampered = { ...genuine, body: genuine.body.replace(exampleContract.title, 'Forged title') };
    const run = spawnSync(python, ['-c', harness], {
      input: JSON.stringify([genuine, tampered]),
      env: { PATH: process.env.PATH, NODE_ENV: 'production', WEBHOOK_SECRET: secret },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const out = run.stdout.trim().split('\n');
    expect(JSON.parse(out.at(-1)!)).toEqual([204, 400]);
    expect(out).toContain(`webhook.test ${exampleContract.id}`);
  });
});
