import { config, type Config } from '@/server/config';

/**
 * How this process sends mail, decided once from the configuration:
 *
 * - `smtp`: nodemailer over SMTP_URL, from MAIL_FROM.
 * - `file`: development without SMTP_URL: each message is logged (to, subject, link) and
 *   written to `.data/mail/` as an `.eml` file, so that the account flows work after
 *   `npm ci && npm run dev` with nothing configured.
 * - `log`: MAIL_TRANSPORT=log in production: on purpose, nothing is sent; one log line per
 *   message, without the recipient or the link (a production log is no place for a
 *   single-use secret).
 *
 * Production (NODE_ENV=production, or on Vercel) without SMTP_URL refuses to start
 * (server/startup.ts, scripts/worker.ts) unless MAIL_TRANSPORT=log: a deployment that
 * silently drops verification and reset e-mails is worse than one that does not start.
 */
export type MailMode = 'smtp' | 'file' | 'log';

export const PRODUCT_NAME = 'Contract Data API';
const DEVELOPMENT_FROM = `${PRODUCT_NAME} <no-reply@localhost>`;

type MailConfig = Pick<Config, 'nodeEnv' | 'mail' | 'publicUrl'>;

function isProduction(c: MailConfig): boolean {
  return c.nodeEnv === 'production' || c.mail.onVercel;
}

export function mailMode(c: MailConfig = config()): MailMode {
  if (c.mail.smtpUrl) return 'smtp';
  return isProduction(c) ? 'log' : 'file';
}

export function mailFrom(c: MailConfig = config()): string {
  return c.mail.from ?? DEVELOPMENT_FROM;
}

/** Why this process must not start (production without a way to send mail), or undefined. */
export function mailStartupProblems(c: MailConfig = config()): string[] {
  if (!isProduction(c)) return [];
  if (!c.mail.smtpUrl && !c.mail.logOnly) {
    return [
      'Mail cannot be sent: set SMTP_URL (smtp://user:pass@host:587 or smtps://…) and MAIL_FROM, or MAIL_TRANSPORT=log to only log each message on purpose (sign-up verification and password resets then never arrive)',
    ];
  }
  if (c.mail.smtpUrl && !c.publicUrl) {
    return ['AUTH_URL is required with SMTP_URL in production: it is the only origin the links in e-mails use (a request’s Host header never is)'];
  }
  return [];
}

/**
 * The origin of every link in an e-mail: AUTH_URL's, never the request's Host (a forged
 * Host would otherwise send a victim a reset link to the attacker's site). Without AUTH_URL
 * (development, or production with MAIL_TRANSPORT=log): the local server.
 */
export function mailLinkOrigin(c: Pick<Config, 'publicUrl'> = config()): string {
  return c.publicUrl ?? `http://localhost:${process.env.PORT ?? 3000}`;
}
