import { parseArgs } from 'node:util';
import { selectTokenById } from '@/db/queries/tokens';
import { describeAccess, describeAddresses, MAX_ROLL_GRACE_HOURS, type Access } from '@/lib/key-restrictions';
import { createApiKey, listKeysManagedBy } from '@/server/access/keys';
import { revokeTokenById, rollApiKey } from '@/server/access/tokens';
import { AppError } from '@/server/errors';
import { UsageError } from '../run-script';
import { userIdOf, type CommandIO } from './command';

const USAGE = `Usage:
  npm run apikey -- create --email EMAIL --name NAME [--expires-in-days DAYS]
                           [--access all|personal,ORG_ID,...] [--permissions contracts:read,contracts:export]
                           [--allowed-ips ADDRESS_OR_CIDR,...] [--organization ORG_ID]
      prints the new key alone on stdout (it is not stored and cannot be shown again);
      --organization: a key owned by that organisation, created on behalf of EMAIL (an owner or admin of it)
  npm run apikey -- roll --id KEY_ID [--grace-hours HOURS]
      prints the new secret alone on stdout; the old one keeps working for HOURS (0 to ${MAX_ROLL_GRACE_HOURS}, default 0)
  npm run apikey -- list --email EMAIL
      the person's keys and those of the organisations they own or administer
  npm run apikey -- revoke --id KEY_ID`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const list = (value: string) => value.split(',').map((v) => v.trim()).filter((v) => v.length > 0);

/** --access all | personal,ORG_ID,...: checked for form here, against the person's memberships by the service. */
function parseAccess(value: string): Access {
  const entries = list(value.toLowerCase());
  if (entries.length === 1 && entries[0] === 'all') return { kind: 'all' };
  if (entries.length === 0) throw new UsageError('--access must be "all" or a list of "personal" and organisation ids');
  const wrong = entries.find((e) => e !== 'personal' && !UUID.test(e));
  if (wrong !== undefined) throw new UsageError(`--access: "${wrong.slice(0, 60)}" is neither "personal" nor an organisation id (UUID); use "all" or a list such as personal,ORG_ID`);
  return { kind: 'chosen', personal: entries.includes('personal'), organizationIds: entries.filter((e) => e !== 'personal') };
}

/** `npm run apikey`: create, roll, list and revoke API keys on behalf of a person or an organisation (USAGE above); its exit code. */
export async function apikey(io: CommandIO): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...io.argv],
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        name: { type: 'string' },
        'expires-in-days': { type: 'string' },
        id: { type: 'string' },
        access: { type: 'string' },
        permissions: { type: 'string' },
        'allowed-ips': { type: 'string' },
        organization: { type: 'string' },
        'grace-hours': { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  if (!command || positionals.length > 1 || !['create', 'list', 'revoke', 'roll'].includes(command)) {
    throw new UsageError(USAGE);
  }

  // Every argument is checked before the database is opened.
  const byId = command === 'revoke' || command === 'roll';
  if (!byId && !values.email) throw new UsageError(`--email is required\n${USAGE}`);
  if (command === 'create' && !values.name?.trim()) throw new UsageError(`--name is required\n${USAGE}`);
  const createOnly = ['access', 'permissions', 'allowed-ips', 'organization', 'expires-in-days'] as const;
  const misplaced = createOnly.find((o) => command !== 'create' && values[o] !== undefined);
  if (misplaced) throw new UsageError(`--${misplaced} is an option of create only\n${USAGE}`);
  if (command !== 'roll' && values['grace-hours'] !== undefined) throw new UsageError(`--grace-hours is an option of roll only\n${USAGE}`);
  let days: number | null = null;
  if (command === 'create' && values['expires-in-days'] !== undefined) {
    if (!/^[1-9][0-9]{0,4}$/.test(values['expires-in-days'])) {
      throw new UsageError('--expires-in-days must be a whole number of days between 1 and 99999');
    }
    days = Number(values['expires-in-days']);
  }
  if (byId && (!values.id || !UUID.test(values.id))) {
    throw new UsageError(`--id must be a key id (UUID)\n${USAGE}`);
  }
  const access = values.access === undefined ? undefined : parseAccess(values.access);
  const permissions = values.permissions === undefined ? undefined : list(values.permissions);
  const allowedAddresses = values['allowed-ips'] === undefined ? undefined : list(values['allowed-ips']);
  if (values.organization !== undefined && !UUID.test(values.organization)) throw new UsageError('--organization must be an organisation id (UUID)');
  let graceHours = 0;
  if (values['grace-hours'] !== undefined) {
    if (!/^[0-9]{1,3}$/.test(values['grace-hours']) || Number(values['grace-hours']) > MAX_ROLL_GRACE_HOURS) {
      throw new UsageError(`--grace-hours must be a whole number of hours from 0 to ${MAX_ROLL_GRACE_HOURS}`);
    }
    graceHours = Number(values['grace-hours']);
  }

  const db = await io.database();
  try {
    if (command === 'create') {
      const userId = await userIdOf(db, values.email!);
      const { secret, token } = await createApiKey(db, userId, {
        name: values.name!,
        expiresInDays: days,
        owner: values.organization ? { kind: 'organization', organizationId: values.organization } : { kind: 'user' },
        access,
        permissions,
        allowedAddresses,
      });
      io.err(`Created "${token.name}" (${token.id}), expires ${token.expiresAt?.toISOString() ?? 'never'}; ${token.restrictions}.`);
      io.out(secret);
    } else if (command === 'list') {
      const keys = await listKeysManagedBy(db, await userIdOf(db, values.email!));
      if (keys.length === 0) io.out('No API keys.');
      for (const k of keys) {
        const owner = k.owner.kind === 'organization' ? `owner ${k.owner.organizationName} (organisation)` : 'owner me';
        const removed = k.removedFrom.length > 0 ? `  removed by ${k.removedFrom.map((r) => r.organizationName).join(', ')}` : '';
        io.out(
          [
            k.id,
            k.status.padEnd(7),
            k.hint,
            k.name,
            owner,
            `access ${describeAccess(k.access, new Map(k.accessOrganizations.map((o) => [o.id, o.name])))}`,
            `permissions ${k.permissions.join(',')}`,
            `addresses ${describeAddresses(k.allowedAddresses)}`,
            `created ${k.createdAt.toISOString()}`,
            `last used ${k.lastUsedAt?.toISOString() ?? 'never'}`,
            `expires ${k.expiresAt?.toISOString() ?? 'never'}`,
          ].join('  ') + removed,
        );
      }
    } else if (command === 'roll') {
      if (!(await selectTokenById(db, 'api_key', values.id!))) throw new UsageError(`No API key with the id ${values.id}.`);
      const { secret, token } = await rollApiKey(db, values.id!, graceHours);
      io.err(`Rolled "${token.name}" (${token.id}); the previous secret ${graceHours === 0 ? 'no longer works' : `works until ${new Date(Date.now() + graceHours * 3_600_000).toISOString()}`}.`);
      io.out(secret);
    } else {
      if (!(await selectTokenById(db, 'api_key', values.id!))) throw new UsageError(`No API key with the id ${values.id}.`);
      const revoked = await revokeTokenById(db, 'api_key', values.id!);
      io.out(`Revoked "${revoked.name}" (${revoked.hint}).`);
    }
  } catch (error) {
    if (error instanceof AppError) throw new UsageError(error.message);
    throw error;
  }
  return 0;
}
