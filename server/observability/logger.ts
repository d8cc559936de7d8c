import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger } from 'pino';
import { logSettings, type LogSettings } from '@/server/config';
import { currentRequest } from './request-scope';

/**
 * The process's logger: one JSON object per line on stdout (pino), `LOG_LEVEL` (default
 * info) and `LOG_FORMAT` (json, or pretty for a terminal: the default of `npm run dev`).
 * docs/operations.md "Logs" lists the fields.
 *
 * - Written to fd 1 by sonic-boom in this thread: no worker thread (pino's transports run
 *   in one, which breaks under Next.js's bundling and on Vercel). A long-running server
 *   (`next start`) gathers lines and writes them together, at 8 KiB or every 100 ms and
 *   when the process exits: one write(2) a line was most of what observing a request cost
 *   (docs/benchmarks.md, "What observability costs"). On a serverless platform (Vercel,
 *   AWS Lambda) each line is written at once: a function frozen after its answer would
 *   keep its buffer until its next request, or lose it.
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
  return pino(options, stdoutDestination());
}

/** Lines gathered up to this many bytes before a write (a list request's line is about 400). */
const BUFFER_BYTES = 8192;
/** ...and written at the latest this long after the first of them. */
const FLUSH_INTERVAL_MS = 100;

function stdoutDestination(): DestinationStream {
  if (serverless(process.env)) return pino.destination({ dest: 1, sync: true });
  // sync: each write, when it happens, is a plain write(2): nothing in flight to lose at exit.
  const destination = pino.destination({ dest: 1, sync: true, minLength: BUFFER_BYTES });
  const flush = () => {
    try {
      destination.flushSync();
    } catch {
      // stdout closed (EPIPE): nothing to write to any more.
    }
  };
  setInterval(flush, FLUSH_INTERVAL_MS).unref();
  // next start exits through process.exit on SIGTERM and SIGINT: 'exit' runs then too.
  process.once('exit', flush);
  return destination;
}

/** Whether the process may be frozen between requests (then no line waits in a buffer). */
export function serverless(env: Readonly<Record<string, string | undefined>>): boolean {
  return Boolean(env.VERCEL || env.AWS_LAMBDA_FUNCTION_NAME);
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
