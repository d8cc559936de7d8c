import type { Database } from '@/db/client';
import { insertMail } from '@/db/queries/mail';
import { afterResponse } from '@/server/after-response';
import { config } from '@/server/config';
import type { MailMessage } from './message';

/**
 * Queues a message: call it with the transaction that decides to send it, so that the
 * message exists if and only if the change it reports was committed. The worker sends
 * it (server/mail/sender.ts, from the webhook worker's passes): never on the request's
 * path, retried when the SMTP server fails, and a crash loses nothing.
 *
 * Where no worker runs in process (Vercel: the cron route drains every minute), the
 * queue is also drained once after the response, so that a reset link does not wait for
 * the next minute.
 */
export async function queueMail(tx: Database, message: MailMessage): Promise<void> {
  await insertMail(tx, { recipient: message.to, subject: message.subject.slice(0, 200), text: message.text, html: message.html });
  if (!config().webhooks.inProcessWorker) {
    afterResponse(
      async () => {
        const [{ getDatabase }, { sendDueMail }] = await Promise.all([import('@/server/database'), import('./sender')]);
        await sendDueMail((await getDatabase()).db);
      },
      { msg: 'queued mail could not be sent after the response (the cron route tries again)' },
    );
  }
}
