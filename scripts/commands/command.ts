import type { Database, DatabaseHandle } from '@/db/client';
import { getDatabase } from '@/server/database';
import { runScript } from '../run-script';

/**
 * What an operator's command (scripts/commands/) is given: its arguments, its two output
 * streams (a line each call) and the database, opened only when asked for, after every
 * argument was checked. Its exit code is what it resolves to (0 when nothing).
 */
export interface CommandIO {
  argv: readonly string[];
  out(line: string): void;
  err(line: string): void;
  database(): Promise<Database>;
}

export type Command = (io: CommandIO) => Promise<number | void>;

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
      if (code) process.exitCode = code;
    } finally {
      await handle?.close();
    }
  });
}
