import {
  DEFAULT_UPCOMING_OFFSETS,
  DISABLE_AFTER_FAILING_DAYS,
  PREVIOUS_SECRET_VALID_HOURS,
  RETRY_DELAYS_SECONDS,
  TEST_EVENT_TYPE,
  WEBHOOK_EVENT_DESCRIPTIONS,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '@/lib/webhooks';
import { exampleContract } from '@/server/contracts/example';

/**
 * The webhooks' part of the OpenAPI document (OpenAPI 3.1 `webhooks`, merged by
 * ./openapi-document.ts): one entry per event with its payload schema, the Standard
 * Webhooks headers and an example, the schemas of the payloads (over the get-one
 * ContractDetail), and a "Webhooks" section of the introduction with a receiver in
 * JavaScript and Python. tests/docs/openapi-webhooks.test.ts validates real deliveries
 * against these schemas.
 */

type Json = Record<string, unknown>;

const RETRIES = RETRY_DELAYS_SECONDS.map((s) => (s < 60 ? `${s} s` : s < 3600 ? `${s / 60} min` : `${s / 3600} h`)).join(', ');

/**
 * The receivers of the reference, exported for tests/docs/webhook-receiver-sample.test.ts,
 * which runs them against deliveries signed and sent by server/webhooks/message.ts and
 * sender.ts. The JavaScript one needs nothing but `standardwebhooks` (node:http, no framework).
 */
export const RECEIVER_JS = `import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks'; // npm install standardwebhooks

const webhook = new Webhook(process.env.WEBHOOK_SECRET); // whsec_…, shown once in Settings → Webhooks
const seen = new Set(); // use your database in production

const server = createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/webhooks/contracts') return res.writeHead(404).end();
  // The signature covers the exact bytes: read the body raw, parse it only after verifying.
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let event;
  try {
    event = webhook.verify(Buffer.concat(chunks).toString('utf8'), req.headers); // checks webhook-id, -timestamp, -signature
  } catch {
    return res.writeHead(400).end('bad signature');
  }
  const id = req.headers['webhook-id'];
  if (!seen.has(id)) { // at-least-once: a retry carries the same webhook-id
    seen.add(id);
    if (event.type === 'contract.deleted') console.log('deleted', event.data.contract.id);
    else console.log(event.type, event.data.contract.title, event.data.changed_fields ?? '');
  }
  res.writeHead(204).end(); // answer 2xx within 10 s; do slow work afterwards
});
server.listen(process.env.PORT ?? 3001, () => console.log('listening on port', server.address().port));`;

export const RECEIVER_PY = `# pip install standardwebhooks flask
import os
from flask import Flask, request
from standardwebhooks.webhooks import Webhook

webhook = Webhook(os.environ["WEBHOOK_SECRET"])  # whsec_…
app = Flask(__name__)

@app.post("/webhooks/contracts")
def contracts():
    try:
        event = webhook.verify(request.get_data(), dict(request.headers))
    except Exception:
        return "bad signature", 400
    # At-least-once: skip a webhook-id you have already handled.
    print(event["type"], event["data"]["contract"]["id"])
    return "", 204`;

const DESCRIPTION = `Instead of polling \`updated_since\`, register an HTTPS endpoint under Settings → Webhooks (or \`npm run webhook -- create\`): the service POSTs a JSON event to it when a contract is created, changed, deleted or finishes extraction, and when a renewal or expiration date comes within the days you choose (default ${DEFAULT_UPCOMING_OFFSETS.join(', ')}). Events are captured by the database in the same transaction as the change (every insert, update and delete), so none is lost; you receive them for the contracts you can see when they are sent (your personal ones and your organisations').

Every request follows [Standard Webhooks](https://www.standardwebhooks.com): headers \`webhook-id\` (\`msg_…\`, the same on every retry of an event: use it to drop duplicates), \`webhook-timestamp\` (Unix seconds) and \`webhook-signature\` (\`v1,\` + base64 HMAC-SHA256 of \`{webhook-id}.{webhook-timestamp}.{body}\` with your endpoint's secret \`whsec_…\`; two signatures, space-separated, for ${PREVIOUS_SECRET_VALID_HOURS} hours after you rotate the secret). The body is \`{type, timestamp, data}\`; \`data.contract\` has the shape of GET /contracts/{id} at the time of the event.

- **Delivery**: at least once, in order per contract, usually within a second or two. Answer any 2xx within 10 s (the first 4 KiB of your answer are kept in the delivery log); redirects are not followed.
- **Retries** after a failure: ${RETRIES} (8 attempts, about a day). An endpoint whose every attempt has failed for ${DISABLE_AFTER_FAILING_DAYS} days is disabled; Settings → Webhooks says why, and you resume it there. Every delivery can be resent from the log.
- **Deletions in bulk**: emptying the table with \`TRUNCATE\` (a reload by the extraction pipeline) sends no \`contract.deleted\`. If you keep a copy, reconcile now and then: list every contract (GET /contracts without filters), drop those no longer listed, then continue with \`updated_since\`.
- **Destinations**: https only, public addresses only (checked when the endpoint is added and again at each delivery); at most 10 endpoints per user.

A receiver in JavaScript (Node.js, no framework; with Express, read the body with \`express.raw({ type: 'application/json' })\` and verify \`req.body\` the same way):

\`\`\`javascript
${RECEIVER_JS}
\`\`\`

And in Python (Flask):

\`\`\`python
${RECEIVER_PY}
\`\`\``;

const header = (name: string, description: string, example: string) => ({ name, in: 'header', required: true, description, schema: { type: 'string' }, example });

const HEADERS = [
  header('webhook-id', 'The event’s id, the same on every retry: deduplicate on it.', 'msg_2b1f8f3e6f1e4d2c9a7b5c3d1e0f9a8b'),
  header('webhook-timestamp', 'Unix time (seconds) of this attempt; reject values far from your clock (the libraries allow 5 minutes).', '1790000000'),
  header(
    'webhook-signature',
    '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{raw body}` keyed with the base64-decoded part of your `whsec_` secret; during a rotation, one per valid secret, separated by spaces.',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
];

const contractRef = { $ref: '#/components/schemas/ContractDetail' };

function eventSchema(type: string, data: Json, description: string): Json {
  return {
    type: 'object',
    description,
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: { type: 'string', const: type },
      timestamp: {
        type: 'string',
        format: 'date-time',
        description:
          'When the event happened (ISO 8601, UTC): for a change, the start of the database transaction that made it, not its commit (do not order events by it); for upcoming dates and test events, when they were queued.',
      },
      data,
    },
  };
}

const upcomingData = (which: string): Json => ({
  type: 'object',
  required: ['contract', 'date', 'offset_days', 'days_until'],
  properties: {
    contract: contractRef,
    date: { type: 'string', format: 'date', description: `The ${which} (YYYY-MM-DD).` },
    offset_days: { type: 'integer', minimum: 0, description: 'The endpoint’s offset this event is for (one of its days before).' },
    days_until: { type: 'integer', minimum: 0, description: 'Days from today (UTC) to the date; at most offset_days.' },
  },
});

const SCHEMAS: Record<WebhookEventType | typeof TEST_EVENT_TYPE, { name: string; schema: Json }> = {
  'contract.created': {
    name: 'ContractCreatedEvent',
    schema: eventSchema('contract.created', { type: 'object', required: ['contract'], properties: { contract: contractRef } }, WEBHOOK_EVENT_DESCRIPTIONS['contract.created']),
  },
  'contract.updated': {
    name: 'ContractUpdatedEvent',
    schema: eventSchema(
      'contract.updated',
      {
        type: 'object',
        required: ['contract', 'changed_fields'],
        properties: {
          contract: contractRef,
          changed_fields: {
            type: 'array',
            minItems: 1,
            items: { type: 'string' },
            description:
              'The fields of `contract` that changed, as paths: `title`, `status`, `file_name`, `file_size`, `created_at`, `organization_id`, `data` (appeared or disappeared with the completed status), `data.expiration_date`, `data.parties.provider`… (`updated_at` is not listed).',
          },
        },
      },
      WEBHOOK_EVENT_DESCRIPTIONS['contract.updated'],
    ),
  },
  'contract.deleted': {
    name: 'ContractDeletedEvent',
    schema: eventSchema(
      'contract.deleted',
      {
        type: 'object',
        required: ['contract'],
        properties: {
          contract: {
            type: 'object',
            required: ['id', 'organization_id'],
            properties: { id: { type: 'string', format: 'uuid' }, organization_id: { type: ['string', 'null'], format: 'uuid', description: 'null for a personal contract.' } },
          },
        },
      },
      WEBHOOK_EVENT_DESCRIPTIONS['contract.deleted'],
    ),
  },
  'contract.extraction_completed': {
    name: 'ContractExtractionCompletedEvent',
    schema: eventSchema('contract.extraction_completed', { type: 'object', required: ['contract'], properties: { contract: contractRef } }, WEBHOOK_EVENT_DESCRIPTIONS['contract.extraction_completed']),
  },
  'contract.renewal_upcoming': {
    name: 'ContractRenewalUpcomingEvent',
    schema: eventSchema('contract.renewal_upcoming', upcomingData('next renewal date (`data.next_renewal_date` of the contract)'), WEBHOOK_EVENT_DESCRIPTIONS['contract.renewal_upcoming']),
  },
  'contract.expiration_upcoming': {
    name: 'ContractExpirationUpcomingEvent',
    schema: eventSchema('contract.expiration_upcoming', upcomingData('expiration date'), WEBHOOK_EVENT_DESCRIPTIONS['contract.expiration_upcoming']),
  },
  'contract.notice_deadline_upcoming': {
    name: 'ContractNoticeDeadlineUpcomingEvent',
    schema: eventSchema(
      'contract.notice_deadline_upcoming',
      upcomingData('notice deadline (`data.notice_deadline` of the contract: the last day notice stops its next renewal)'),
      WEBHOOK_EVENT_DESCRIPTIONS['contract.notice_deadline_upcoming'],
    ),
  },
  [TEST_EVENT_TYPE]: {
    name: 'WebhookTestEvent',
    schema: eventSchema(
      TEST_EVENT_TYPE,
      {
        type: 'object',
        required: ['endpoint_id', 'message', 'contract'],
        properties: {
          endpoint_id: { type: 'string', format: 'uuid' },
          message: { type: 'string' },
          contract: { ...contractRef, description: 'An example contract, not one of yours.' },
        },
      },
      'Sent only when you ask for a test (Settings → Webhooks, `npm run webhook -- test`); not subscribable.',
    ),
  },
};

const TIMESTAMP = '2026-10-01T09:00:00.000Z';
const EXAMPLES: Record<string, Json> = {
  'contract.created': { contract: { ...exampleContract, status: 'pending', data: null } },
  'contract.updated': { contract: exampleContract, changed_fields: ['data.renewal_date'] },
  'contract.deleted': { contract: { id: exampleContract.id, organization_id: exampleContract.organization_id } },
  'contract.extraction_completed': { contract: exampleContract },
  'contract.renewal_upcoming': { contract: exampleContract, date: exampleContract.data.next_renewal_date, offset_days: 30, days_until: 30 },
  'contract.expiration_upcoming': { contract: exampleContract, date: exampleContract.data.expiration_date, offset_days: 90, days_until: 88 },
  'contract.notice_deadline_upcoming': { contract: exampleContract, date: exampleContract.data.notice_deadline, offset_days: 30, days_until: 21 },
  [TEST_EVENT_TYPE]: { endpoint_id: '5d2c0f4e-3b8a-4c1d-9e7f-1a2b3c4d5e6f', message: 'A test event. Its contract is an example, not one of yours.', contract: exampleContract },
};

/** The `webhooks` of the document, their schemas, their tag, and the introduction's section. */
export function webhooksOpenApi(): { webhooks: Json; schemas: Json; tag: Json; description: string } {
  const webhooks: Json = {};
  const schemas: Json = {};
  for (const type of [...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE] as const) {
    const { name, schema } = SCHEMAS[type];
    schemas[name] = schema;
    webhooks[type] = {
      post: {
        operationId: `${type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase())}Webhook`,
        summary: type,
        description: `${schema.description as string} Signed per Standard Webhooks (see the introduction's Webhooks section).`,
        tags: ['Webhooks'],
        security: [],
        parameters: HEADERS,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` }, example: { type, timestamp: TIMESTAMP, data: EXAMPLES[type] } } },
        },
        responses: {
          '2XX': { description: 'Acknowledged: any 2xx within 10 s. Anything else (a 3xx included: redirects are not followed), or no answer, is retried.' },
        },
      },
    };
  }
  return {
    webhooks,
    schemas,
    tag: { name: 'Webhooks', description: 'Events POSTed to your endpoints (Settings → Webhooks), signed per Standard Webhooks.' },
    description: DESCRIPTION,
  };
}

/** Adds the webhooks to a built document: `webhooks`, their schemas and tag, and the introduction's section. */
export function addWebhooks(doc: Json): void {
  const part = webhooksOpenApi();
  doc.webhooks = part.webhooks;
  const components = (doc.components ??= {}) as Json;
  components.schemas = { ...(components.schemas as Json), ...part.schemas };
  doc.tags = [...((doc.tags as Json[] | undefined) ?? []), part.tag];
  const info = doc.info as Json;
  // Before the Typed client section, if there is one; else at the end.
  const intro = String(info.description ?? '');
  const at = intro.indexOf('\n## Typed client');
  const section = `\n## Webhooks\n${part.description}\n`;
  info.description = at >= 0 ? `${intro.slice(0, at)}${section}${intro.slice(at)}` : `${intro}\n${section}`;
}
