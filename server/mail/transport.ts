import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import { config, dataDir } from '@/server/config';
import { logger } from '@/server/observability/logger';
import { firstLinkOf, type MailMessage } from './message';
import { mailFrom, mailMode } from './settings';

/** Sends one message, or throws (the outbox tries again later). */
export interface MailTransport {
  send(message: MailMessage): Promise<void>;
}

/** SMTP: a connection per message (a few a minute at most), with time bounds so a stuck server cannot hold a worker. */
export function smtpTransport(smtpUrl: string, from: string): MailTransport {
  const transporter: Transporter = nodemailer.createTransport(smtpUrl, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
  return {
    async send(message) {
      await transporter.sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    },
  };
}

/** Development without SMTP_URL: a log line with the link, and the message as an .eml file under .data/mail/. */
export function fileTransport(dir: string, from: string): MailTransport {
  const builder: Transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(message) {
      const info = await builder.sendMail({ from, to: message.to, subject: message.subject, text: message.text, html: message.html });
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${Math.random().toString(36).slice(2, 8)}.eml`);
      // Written beside it, then renamed: whoever watches the folder (a mail viewer, a test)
      // sees a whole message or none, never a file still being written.
      const partial = `${file}.partial`;
      await writeFile(partial, info.message as Buffer, { mode: 0o600 });
      await rename(partial, file);
      logger().info({ to: message.to, subject: message.subject, link: firstLinkOf(message.text), file: path.relative(process.cwd(), file) }, 'mail written to the development outbox (no SMTP_URL)');
    },
  };
}

/** MAIL_TRANSPORT=log in production: nothing sent, one line without the recipient or the link. */
export function logTransport(): MailTransport {
  return {
    async send(message) {
      logger().info({ subject: message.subject }, 'mail not sent (MAIL_TRANSPORT=log)');
    },
  };
}

const TRANSPORT = Symbol.for('contract-data-api.mail-transport');
type WithTransport = typeof globalThis & { [TRANSPORT]?: MailTransport };

/** The process's transport, from the configuration (server/mail/settings.ts). */
export function mailTransport(): MailTransport {
  const g = globalThis as WithTransport;
  if (g[TRANSPORT]) return g[TRANSPORT];
  const mode = mailMode();
  const smtpUrl = config().mail.smtpUrl;
  g[TRANSPORT] = mode === 'smtp' && smtpUrl ? smtpTransport(smtpUrl, mailFrom()) : mode === 'file' ? fileTransport(path.join(dataDir(), 'mail'), mailFrom()) : logTransport();
  return g[TRANSPORT];
}

/** Forgets the transport, so that the next use reads the configuration again (tests). */
export function resetMailTransport(): void {
  delete (globalThis as WithTransport)[TRANSPORT];
}
