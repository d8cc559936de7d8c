import { ConfigError } from '@/server/config';
import { causeChain } from '@/server/errors';

/**
 * Runs a command-line entry point: a clear message and exit code 1 on failure, and an
 * exit once the work is done (open pools would otherwise keep the process alive).
 */
export function runScript(main: () => Promise<void>): void {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (error: unknown) => {
      console.error(failureMessage(error));
      process.exit(1);
    },
  );
}

/** What a failed command prints on stderr: the message alone for a usage or configuration mistake, never a stack trace. */
export function failureMessage(error: unknown): string {
  if (error instanceof ConfigError || error instanceof UsageError) return error.message;
  const [, cause] = causeChain(error);
  const causeLine = error instanceof Error && cause instanceof Error ? `\n  cause: ${cause.message}` : '';
  return error instanceof Error ? `Error: ${error.message}${causeLine}` : String(error);
}

/** A mistake in how the command was called: printed without a stack trace. */
export class UsageError extends Error {}
