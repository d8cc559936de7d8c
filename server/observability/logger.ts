import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger } from 'pino';
import { logSettings, type LogSettings } from '@/server/config';
import { currentRequest } from './request-scope';

/**
 * The process's logger: one JSON object per line on stdout (pino), `LOG_LEVEL` (default
 * info) and `LOG_FORMAT` (json, or pretty for a terminal: the default of `npm run dev`).
 * docs/operations.md "Logs" lists the fields.
 *
 * - Written synchronously to fd 1 (sonic-boom, sync): no worker thread (pino's transports
 *   run in one, which breaks under Next.js's bundling and on Vercel), and no buffer to
 *   lose when a serverless function is frozen or the process exits.
 * - pretty is pino-pretty's stream in this thread, loaded only when asked for (it costs
 *   tens of milliseconds to load, which a production cold start need not pay).
 * - Every line written while a request is served carries its request_id (the mixin reads
 *   the request's record), so errors and warnings can be joined to the request's line.
 * - Errors go under `err` through a serializer that never writes a failed query's
 *   parameters or a Redis command (they carry key hashes, e-mail addresses, filters).
 *
 * Call logger() at each use rather than keeping the instance: tests swap the destination.
 */
export type { Logger };

let root: Logger | undefined;
let destinationOverride: DestinationStream | undefined;
let settingsOverride: LogSettings | undefined;

export function logger(): Logger {
  root ??= createLogger(settingsOverride ?? logSettings(process.env), destinationOverride);
  return root;
}

/**
 * Tests: write to `destination` (JSON whatever LOG_FORMAT says) at `level`, or back to
 * stdout and the environment's settings with no argument.
 */
export function setLogDestination(destination?: DestinationStream, level: LogSettings['level'] = 'info'): void {
  destinationOverride = destination;
  settingsOverride = destination ? { level, format: 'json' } : undefined;
  root = undefined;
}

function createLogger(settings: LogSettings, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level: settings.level,
    // ISO 8601 rather than epoch milliseconds: read by people as often as by machines.
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: serializeError },
    mixin: requestIdOfLine,
  };
  if (destination) return pino(options, destination);
  if (settings.format === 'pretty') return pino(options, prettyStream());
  return pino(options, pino.destination({ dest: 1, sync: true }));
}

function requestIdOfLine(): { request_id?: string } {
  const record = currentRequest();
  return record ? { request_id: record.requestId } : {};
}

function prettyStream(): DestinationStream {
  // Resolved at run time, from this module: pino-pretty stays out of production's cold start.
  const load = createRequire(import.meta.url);
  const pretty = load('pino-pretty') as typeof import('pino-pretty');
  return pretty.build({ sync: true, colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

/** An error as a log field: name, code, message and stack of each error down the cause chain (at most five). */
export interface LoggedError {
  type: string;
  code?: string;
  message: string;
  stack?: string;
  cause?: LoggedError;
}

/**
 * pino's own serializer would write every property of an error, and its message as it is.
 * Drizzle appends a failed query's parameters to its message ("params: ...") and
 * @upstash/redis the whole command (", command was: [...]"): both are cut. The stack is
 * kept to its frames (its first line repeats the message).
 */
export function serializeError(error: unknown, depth = 0): LoggedError {
  if (!(error instanceof Error)) {
    return { type: typeof error, message: typeof error === 'string' ? cleanMessage(error) : Object.prototype.toString.call(error) };
  }
  const code = (error as { code?: unknown }).code;
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  const cause = (error as { cause?: unknown }).cause;
  return {
    type: error.name,
    ...(typeof code === 'string' ? { code } : {}),
    message: cleanMessage(error.message),
    ...(frames.length > 0 ? { stack: frames.join('\n') } : {}),
    ...(cause !== undefined && cause !== null && depth < 4 ? { cause: serializeError(cause, depth + 1) } : {}),
  };
}

function cleanMessage(message: string): string {
  return message.replace(/\nparams: [\s\S]*$/, '\nparams: (not logged)').replace(/,? command was:[\s\S]*$/, '');
}
