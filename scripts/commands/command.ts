import type { Database, DatabaseHandle } from '@/db/client';
import { userIdByEmail } from '@/server/auth/users';
import { getDatabase } from '@/server/database';
import { runScript, UsageError } from '../run-script';

/**
 * What an operator's command (scripts/commands/) is given: its arguments, its two output
 * streams (a line each call) and the database, opened only when asked for, after every
 * argument was checked. Its exit code is what it resolves to.
 */
export interface CommandIO {
  argv: readonly string[];
  out(line: string): void;
  err(line: string): void;
  database(): Promise<Database>;
}

export type Command = (io: CommandIO) => Promise<number>;

/** A command as a process: the process's arguments and console, the configured database (closed at the end). */
export function runCommand(command: Command): void {
  let handle: DatabaseHandle | undefined;
  runScript(async () => {
    try {
      const code = await command({
        argv: process.argv.slice(2),
        out: (line) => console.log(line),
        err: (line) => console.error(line),
        database: async () => (handle ??= await getDatabase()).db,
      });
      process.exitCode = code;
    } finally {
      await handle?.close();
    }
  });
}

/** The account a command acts for, by its e-mail address; a usage error when there is none. */
export async function userIdOf(db: Database, email: string): Promise<string> {
  const userId = await userIdByEmail(db, email);
  if (!userId) throw new UsageError(`No user with the email ${email}.`);
  return userId;
}
