import { parseArgs } from 'node:util';
import { selectEndpointOwner } from '@/db/queries/webhooks';
import { WEBHOOK_EVENT_TYPES } from '@/lib/webhooks';
import { AppError } from '@/server/errors';
import { createEndpoint, deleteEndpoint, listEndpoints, sendTestEvent } from '@/server/webhooks/endpoints';
import { UsageError } from '../run-script';
import { userIdOf, type CommandIO } from './command';

const USAGE = `Usage:
  npm run webhook -- create --email EMAIL --url URL [--events a,b] [--offsets 90,30,7]
      prints {"id": …, "secret": "whsec_…"} on stdout (the secret is not shown again)
      events: ${WEBHOOK_EVENT_TYPES.join(', ')} (default: all)
  npm run webhook -- list --email EMAIL
  npm run webhook -- delete --id ENDPOINT_ID
  npm run webhook -- test --id ENDPOINT_ID
      sends a webhook.test event now and prints the outcome as JSON (exit 1 unless delivered)`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function listOf(text: string | undefined): string[] | undefined {
  return text === undefined ? undefined : text.split(',').map((item) => item.trim()).filter(Boolean);
}

function offsetsOf(text: string | undefined): number[] | undefined {
  const items = listOf(text);
  if (items === undefined) return undefined;
  if (!items.every((item) => /^[0-9]{1,4}$/.test(item))) throw new UsageError('--offsets must be whole numbers of days separated by commas, such as 90,30,7');
  return items.map(Number);
}

/** `npm run webhook`: create, list, delete and test a person's webhook endpoints (USAGE above); its exit code. */
export async function webhook(io: CommandIO): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...io.argv],
      allowPositionals: true,
      options: { email: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, offsets: { type: 'string' }, id: { type: 'string' } },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  if (!command || positionals.length > 1 || !['create', 'list', 'delete', 'test'].includes(command)) throw new UsageError(USAGE);

  // Every argument is checked before the database is opened.
  if ((command === 'create' || command === 'list') && !values.email) throw new UsageError(`--email is required\n${USAGE}`);
  if (command === 'create' && !values.url) throw new UsageError(`--url is required\n${USAGE}`);
  if ((command === 'delete' || command === 'test') && (!values.id || !UUID.test(values.id))) {
    throw new UsageError(`--id must be an endpoint id (UUID)\n${USAGE}`);
  }
  const offsets = offsetsOf(values.offsets);
  const events = listOf(values.events);

  const db = await io.database();
  try {
    if (command === 'create') {
      const userId = await userIdOf(db, values.email!);
      const { secret, endpoint } = await createEndpoint(db, userId, {
        url: values.url!,
        ...(events ? { eventTypes: events as never } : {}),
        ...(offsets ? { renewalOffsets: offsets } : {}),
      });
      io.err(`Created endpoint ${endpoint.id} for ${endpoint.url}: ${endpoint.eventTypes.join(', ')}; offsets ${endpoint.renewalOffsets.join(', ')} days.`);
      io.out(JSON.stringify({ id: endpoint.id, secret }));
    } else if (command === 'list') {
      const endpoints = await listEndpoints(db, await userIdOf(db, values.email!));
      if (endpoints.length === 0) io.out('No webhook endpoints.');
      for (const e of endpoints) {
        io.out(
          [e.id, e.status.padEnd(8), e.secretHint, e.url, e.eventTypes.join(','), `offsets ${e.renewalOffsets.join(',')}`, `last 24 h ${e.last24h.succeeded} ok / ${e.last24h.failed} failed`, ...(e.disabledReason ? [e.disabledReason] : [])].join('  '),
        );
      }
    } else {
      const owner = await selectEndpointOwner(db, values.id!);
      if (!owner) throw new UsageError(`No webhook endpoint with the id ${values.id}.`);
      if (command === 'delete') {
        await deleteEndpoint(db, owner, values.id!);
        io.out(`Deleted endpoint ${values.id}.`);
      } else {
        const outcome = await sendTestEvent(db, owner, values.id!);
        io.out(
          JSON.stringify({
            delivery_id: outcome.id,
            state: outcome.state,
            status_code: outcome.lastStatusCode,
            duration_ms: outcome.lastDurationMs,
            error: outcome.lastError,
          }),
        );
        if (outcome.state !== 'succeeded') return 1;
      }
    }
  } catch (error) {
    if (error instanceof AppError) throw new UsageError(error.message);
    throw error;
  }
  return 0;
}
