import { causeChain, errorCodeOf } from '@/server/errors';
import { logger } from '@/server/observability/logger';

/**
 * Warnings about the rate-limit store. During an outage every request fails the same
 * way, so lines are throttled: at most one per interval, carrying the number of
 * failures that were not printed. Identifiers (key ids, client addresses) never reach
 * the log: callers pass only an error, whose message is cleaned by describeError().
 */

export interface FailureLog {
  /** Records one failure of the store; prints it unless a line was printed recently. */
  failure(context: string, error?: unknown): void;
  /** Records a successful store call; prints one line when it ends a run of failures. */
  success(): void;
}

/** One warning as the logger writes it: a stable message and its fields. */
export interface FailureLogEntry {
  msg: 'rate-limit store failed; requests are served without a limit' | 'rate-limit store reachable again';
  fields: { context?: string; error?: string; unlogged_failures?: number; failures?: number };
}

export interface FailureLogOptions {
  intervalMs?: number;
  /** Where a warning goes: `line` for people, `entry` for the logger (the default). */
  warn?: (line: string, entry: FailureLogEntry) => void;
  now?: () => number;
}

const PREFIX = '[rate-limit]';

export function createFailureLog(options: FailureLogOptions = {}): FailureLog {
  const intervalMs = options.intervalMs ?? 30_000;
  const warn = options.warn ?? ((_line: string, entry: FailureLogEntry) => logger().warn(entry.fields, entry.msg));
  const now = options.now ?? Date.now;
  let lastPrintedAt = -Infinity;
  let unprinted = 0;
  let failuresSinceSuccess = 0;

  return {
    failure(context, error) {
      failuresSinceSuccess += 1;
      const t = now();
      if (t - lastPrintedAt < intervalMs) {
        unprinted += 1;
        return;
      }
      const more = unprinted > 0 ? ` (+${unprinted} similar failures not logged since the previous line)` : '';
      const described = error === undefined ? undefined : describeError(error);
      const fields = { context, ...(described === undefined ? {} : { error: described }), ...(unprinted > 0 ? { unlogged_failures: unprinted } : {}) };
      lastPrintedAt = t;
      unprinted = 0;
      const cause = described === undefined ? '' : `: ${described}`;
      warn(`${PREFIX} ${context}; requests are served without a limit${cause}${more}`, { msg: 'rate-limit store failed; requests are served without a limit', fields });
    },
    success() {
      if (failuresSinceSuccess === 0) return;
      // Rare (once per outage), so not throttled; it tells the reader the outage ended.
      warn(`${PREFIX} store reachable again after ${failuresSinceSuccess} failures`, {
        msg: 'rate-limit store reachable again',
        fields: { failures: failuresSinceSuccess },
      });
      failuresSinceSuccess = 0;
      unprinted = 0;
      lastPrintedAt = -Infinity;
    },
  };
}

/**
 * A short description of an error that is safe to log. @upstash/redis appends the whole
 * command to its messages (", command was: [...]"), and the command holds the keys,
 * which contain identifiers: that part is cut, and the rest is shortened.
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return typeof error === 'string' ? clip(error) : 'unknown error';
  const code = errorCodeOf(error);
  const message = error.message.replace(/,? command was:[\s\S]*$/, '');
  const [, cause] = causeChain(error);
  const causeMessage = cause instanceof Error && cause.message !== error.message ? ` (${cause.message})` : '';
  return clip(`${error.name}${code ? ` ${code}` : ''}: ${message}${causeMessage}`);
}

function clip(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 240 ? `${oneLine.slice(0, 237)}...` : oneLine;
}
