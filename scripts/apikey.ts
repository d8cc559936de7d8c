import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import type { Database } from '@/db/client';
import { selectTokenById } from '@/db/queries/tokens';
import { users } from '@/db/schema';
import { createToken, listTokens, revokeTokenById } from '@/server/access/tokens';
import { normalizeEmail } from '@/server/auth/users';
import { getDatabase } from '@/server/database';
import { AppError } from '@/server/errors';
import { runScript, UsageError } from './run-script';

const USAGE = `Usage:
  npm run apikey -- create --email EMAIL --name NAME [--expires-in-days DAYS]
      prints the new key alone on stdout (it is not stored and cannot be shown again)
  npm run apikey -- list --email EMAIL
  npm run apikey -- revoke --id KEY_ID`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function userIdOf(db: Database, email: string): Promise<string> {
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, normalizeEmail(email)));
  if (!user) throw new UsageError(`No user with the email ${email}.`);
  return user.id;
}

runScript(async () => {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        name: { type: 'string' },
        'expires-in-days': { type: 'string' },
        id: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  if (!command || positionals.length > 1 || !['create', 'list', 'revoke'].includes(command)) {
    throw new UsageError(USAGE);
  }

  // Every argument is checked before the database is opened.
  if (command !== 'revoke' && !values.email) throw new UsageError(`--email is required\n${USAGE}`);
  if (command === 'create' && !values.name?.trim()) throw new UsageError(`--name is required\n${USAGE}`);
  let days: number | null = null;
  if (command === 'create' && values['expires-in-days'] !== undefined) {
    if (!/^[1-9][0-9]{0,4}$/.test(values['expires-in-days'])) {
      throw new UsageError('--expires-in-days must be a whole number of days between 1 and 99999');
    }
    days = Number(values['expires-in-days']);
  }
  if (command === 'revoke' && (!values.id || !UUID.test(values.id))) {
    throw new UsageError(`--id must be a key id (UUID)\n${USAGE}`);
  }

  const handle = await getDatabase();
  const db = handle.db;
  try {
    if (command === 'create') {
      const userId = await userIdOf(db, values.email!);
      const { secret, token } = await createToken(db, 'api_key', userId, { name: values.name!, expiresInDays: days });
      console.error(`Created "${token.name}" (${token.id}), expires ${token.expiresAt?.toISOString() ?? 'never'}.`);
      console.log(secret);
    } else if (command === 'list') {
      const keys = await listTokens(db, 'api_key', await userIdOf(db, values.email!));
      if (keys.length === 0) console.log('No API keys.');
      for (const k of keys) {
        console.log(
          [k.id, k.status.padEnd(7), k.hint, k.name, `created ${k.createdAt.toISOString()}`, `last used ${k.lastUsedAt?.toISOString() ?? 'never'}`, `expires ${k.expiresAt?.toISOString() ?? 'never'}`].join('  '),
        );
      }
    } else {
      if (!(await selectTokenById(db, 'api_key', values.id!))) throw new UsageError(`No API key with the id ${values.id}.`);
      const revoked = await revokeTokenById(db, 'api_key', values.id!);
      console.log(`Revoked "${revoked.name}" (${revoked.hint}).`);
    }
  } catch (error) {
    if (error instanceof AppError) throw new UsageError(error.message);
    throw error;
  } finally {
    await handle.close();
  }
});
