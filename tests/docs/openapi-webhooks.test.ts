import OpenAPIBackend, { type Document } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_ORGS, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES } from '@/lib/webhooks';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { sendTestEvent } from '@/server/webhooks/endpoints';
import { queueUpcomingEvents } from '@/server/webhooks/upcoming';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { PRIVATE_OK, receiverEndpoint, startReceiver, testWorker, WEBHOOK_TEST_ENV, type Receiver } from '../webhooks/support';

/**
 * The document's `webhooks` (OpenAPI 3.1): one per event, with the Standard Webhooks
 * headers; their examples and real deliveries of every event, made through the trigger and
 * the worker, match the payload schemas.
 */

configureForFile(WEBHOOK_TEST_ENV);

type Json = Record<string, unknown>;
const FORMATS: Record<string, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
};

const doc = buildOpenApiDocument('https://api.example.test');
const webhooks = doc.webhooks as Record<string, { post: Json }>;

/** The webhooks as operations of paths, which openapi-backend validates request bodies of. */
async function validator(): Promise<OpenAPIBackend> {
  const definition = structuredClone(doc) as Json;
  const schemas = (definition.components as Json).schemas as Record<string, Json>;
  // openapi-backend resolves no $ref inside a request body's schema: inline them.
  const inline = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(inline);
    if (!value || typeof value !== 'object') return value;
    const ref = (value as { $ref?: string }).$ref;
    if (ref) return inline({ ...schemas[ref.split('/').pop()!], ...Object.fromEntries(Object.entries(value).filter(([k]) => k !== '$ref')) });
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v)]));
  };
  definition.paths = Object.fromEntries(Object.entries(webhooks).map(([type, item]) => [`/hooks/${type}`, inline(item)]));
  delete definition.webhooks;
  const api = new OpenAPIBackend({
    definition: definition as unknown as Document,
    quick: true,
    validate: true,
    customizeAjv: (ajv) => {
      for (const [name, pattern] of Object.entries(FORMATS)) ajv.addFormat(name, pattern);
      return ajv;
    },
  });
  await api.init();
  return api;
}

function problems(api: OpenAPIBackend, body: unknown, headers: Record<string, string> = {}): unknown[] {
  const type = (body as { type: string }).type;
  const result = api.validateRequest({ method: 'post', path: `/hooks/${type}`, body, headers: { 'content-type': 'application/json', ...headers } });
  return result.errors ?? [];
}

describe('the webhooks of the OpenAPI document', () => {
  it('has one entry per event, with the three Standard Webhooks headers and an example that matches its schema', async () => {
    expect(Object.keys(webhooks)).toEqual([...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE]);
    const api = await validator();
    for (const [type, { post }] of Object.entries(webhooks)) {
      expect((post.parameters as { name: string }[]).map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
      const example = (((post.requestBody as Json).content as Record<string, Json>)['application/json']!.example) as Json;
      expect(example.type).toBe(type);
      expect(problems(api, example, { 'webhook-id': 'msg_x', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' }), type).toEqual([]);
    }
    const intro = String((doc.info as Json).description);
    expect(intro).toContain('## Webhooks');
    expect(intro).toContain("import { Webhook } from 'standardwebhooks'");
    expect(intro).toContain('from standardwebhooks.webhooks import Webhook');
  });

  describe('real deliveries of every event', () => {
    let handle: DatabaseHandle;
    let receiver: Receiver;
    beforeAll(async () => {
      handle = await createTestDatabase();
      await seedDemo(handle.db);
      receiver = await startReceiver();
    });
    afterAll(async () => {
      await receiver?.close();
      await handle?.close();
    });

    it('match the schemas', async () => {
      const { endpoint } = await receiverEndpoint(handle.db, DEMO_USERS.alice.id, receiver, { eventTypes: [...WEBHOOK_EVENT_TYPES], renewalOffsets: [365] });
      await handle.query(`INSERT INTO contracts (owner_id, organization_id, title, file_name, file_size, status) VALUES ($1, $2, 'New', 'n.pdf', 1, 'processing')`, [DEMO_USERS.alice.id, DEMO_ORGS.acme.id]);
      const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
      await handle.query(`UPDATE contracts SET status = 'completed', renewal_date = $1, expiration_date = $2, contract_value = 12.5, confidence_score = 0.75 WHERE title = 'New'`, [inDays(100), inDays(200)]);
      await handle.query(`DELETE FROM contracts WHERE title = 'New'`);
      await queueUpcomingEvents(handle.db, new Date());
      await testWorker(handle.db).runOnce();
      await sendTestEvent(handle.db, DEMO_USERS.alice.id, endpoint.id, { policy: PRIVATE_OK });
      const api = await validator();
      const types = new Set<string>();
      for (const request of receiver.received) {
        const body = JSON.parse(request.body) as { type: string };
        types.add(body.type);
        expect(problems(api, body, request.headers as Record<string, string>), request.body.slice(0, 300)).toEqual([]);
      }
      expect([...types].sort()).toEqual([...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE].sort());
    });
  });
});
