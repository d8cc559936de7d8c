import type { Database } from '@/db/client';
import type { Command } from '@/scripts/commands/command';
import { failureMessage } from '@/scripts/run-script';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * An operator's command (scripts/commands/) run in the test's process against `db`: what
 * its process prints and exits with (a failure: scripts/run-script.ts's message on stderr,
 * code 1), without a process of its own that loads the app and opens the database (3 to 7 s
 * each on PGlite). Each CLI's test file also runs a few commands as real processes, and
 * checks that both ways print the same.
 */
export async function runInProcess(command: Command, db: Database, argv: string[]): Promise<CommandResult> {
  const out: string[] = [];
  const err: string[] = [];
  const text = (lines: string[]) => lines.map((line) => `${line}\n`).join('');
  try {
    const code = await command({ argv, out: (line) => out.push(line), err: (line) => err.push(line), database: async () => db });
    return { code, stdout: text(out), stderr: text(err) };
  } catch (error) {
    err.push(failureMessage(error));
    return { code: 1, stdout: text(out), stderr: text(err) };
  }
}
