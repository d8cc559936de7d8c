import { Writable } from 'node:stream';
import type { LogSettings } from '@/server/config';
import { setLogDestination } from '@/server/observability/logger';

/** One line of the app's log, parsed. */
export interface LogEntry {
  level: string;
  msg: string;
  request_id?: string;
  [field: string]: unknown;
}

export interface CapturedLogs {
  /** Every line so far, parsed. */
  readonly entries: LogEntry[];
  /** Every line so far as written (JSON text), for searching the raw output. */
  readonly lines: string[];
  /** `msg` and the fields as one string per line, as a person would grep them. */
  texts(): string[];
  /** Back to stdout. */
  restore(): void;
}

/**
 * The app's logger writes into memory instead of stdout until `restore()` (all levels down
 * to `level`), so that a test can assert on what was logged. Each raw line also goes to
 * `alsoInto` when given (a test's record of everything the process printed).
 */
export function captureLogs(level: LogSettings['level'] = 'info', alsoInto?: string[]): CapturedLogs {
  const lines: string[] = [];
  const entries: LogEntry[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      for (const line of String(chunk).split('\n')) {
        if (!line) continue;
        lines.push(line);
        alsoInto?.push(line);
        entries.push(JSON.parse(line) as LogEntry);
      }
      done();
    },
  });
  setLogDestination(sink, level);
  return {
    entries,
    lines,
    texts: () => lines.slice(),
    restore: () => setLogDestination(),
  };
}
