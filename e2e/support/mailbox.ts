import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../../tests/helpers/smtp-server';

/**
 * The suite's mail: e2e/web-server.ts starts a real SMTP server (tests/helpers/smtp-server.ts)
 * next to `next start` and points SMTP_URL at it; every message it receives is written as
 * JSON into E2E_MAILBOX (a directory playwright.config.ts makes once per run), where the
 * specs read it with `waitForMail`: the Playwright workers are other processes than the
 * web server's.
 */
export type { ReceivedMail };

export async function startMailbox(dir: string): Promise<TestSmtpServer> {
  mkdirSync(dir, { recursive: true });
  let n = 0;
  return startSmtpServer(0, {
    // Written beside it, then renamed: a spec polling the folder from another process reads
    // a whole message or none (CI once read a file still being written: "Unexpected end of JSON input").
    onMail: (mail) => {
      const file = path.join(dir, `${Date.now()}-${process.pid}-${n++}.json`);
      writeFileSync(`${file}.partial`, JSON.stringify(mail));
      renameSync(`${file}.partial`, file);
    },
  });
}

function mailboxDir(): string {
  const dir = process.env.E2E_MAILBOX;
  if (!dir) throw new Error('E2E_MAILBOX is not set: run the specs through playwright.config.ts');
  return dir;
}

/** Every message in the mailbox so far, oldest first. */
export function readMailbox(): ReceivedMail[] {
  const dir = mailboxDir();
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort((a, b) => Number(a.split('-')[0]) - Number(b.split('-')[0]) || a.localeCompare(b))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as ReceivedMail);
}

/** The first message to `to` whose subject matches, waiting for the worker to send it. */
export async function waitForMail(to: string, subject: RegExp, timeoutMs = 20_000): Promise<ReceivedMail> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = readMailbox().find((m) => m.to.includes(to) && subject.test(m.subject));
    if (found) return found;
    if (Date.now() > deadline) {
      const seen = readMailbox().filter((m) => m.to.includes(to)).map((m) => m.subject);
      throw new Error(`no mail to ${to} matching ${subject} within ${timeoutMs} ms (to this address: ${JSON.stringify(seen)})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The messages to `to` so far. */
export function mailTo(to: string): ReceivedMail[] {
  return readMailbox().filter((m) => m.to.includes(to));
}
