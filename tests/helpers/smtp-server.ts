import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server on a loopback port, as a mail provider would run one (smtp-server
 * from nodemailer's authors): it accepts any sender and recipient, parses every message
 * it receives (mailparser), and can be told to refuse the next messages with a temporary
 * failure (451), so that a test sees the outbox try again. Shared by the vitest files and
 * the Playwright specs (e2e/).
 */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** The raw message as it arrived. */
  raw: string;
  /** Every absolute link of the text part. */
  links: string[];
}

export interface TestSmtpServer {
  port: number;
  /** smtp://127.0.0.1:port (no TLS, any credentials accepted). */
  url: string;
  received: ReceivedMail[];
  /** How many of the next messages are refused with 451 (the outbox retries them). */
  refuseNext: number;
  /** Resolves with the first message (received so far or later) that `match` accepts; rejects after `timeoutMs`. */
  waitFor(match: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startSmtpServer(port = 0, options: { onMail?: (mail: ReceivedMail) => void } = {}): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const state = { refuseNext: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (state.refuseNext > 0) {
          state.refuseNext--;
          const error = new Error('Try again later') as Error & { responseCode: number };
          error.responseCode = 451;
          return callback(error);
        }
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            const text = parsed.text ?? '';
            const mail: ReceivedMail = {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              subject: parsed.subject ?? '',
              text,
              html: typeof parsed.html === 'string' ? parsed.html : '',
              raw: raw.toString('utf8'),
              links: text.match(/https?:\/\/\S+/g) ?? [],
            };
            received.push(mail);
            options.onMail?.(mail);
            for (const wake of waiters) wake();
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.server.address() as AddressInfo;
  return {
    port: bound,
    url: `smtp://127.0.0.1:${bound}`,
    received,
    get refuseNext() {
      return state.refuseNext;
    },
    set refuseNext(n: number) {
      state.refuseNext = n;
    },
    waitFor(match, timeoutMs = 15_000) {
      return new Promise<ReceivedMail>((resolve, reject) => {
        const check = () => {
          const found = received.find(match);
          if (!found) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching mail within ${timeoutMs} ms; received: ${received.map((m) => `${m.to.join(',')} "${m.subject}"`).join('; ') || 'nothing'}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
