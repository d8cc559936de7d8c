import { SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import { escapeHtml, type MailMessage } from './message';
import { mailLinkOrigin, PRODUCT_NAME } from './settings';

/**
 * The messages the account flows send. Each has a plain-text and an HTML part with the
 * same words; links are absolute on AUTH_URL's origin (settings.ts) and carry no address
 * or user id, only a single-use token, after `#` so that it never reaches a server's log
 * or a Referer header (the page reads it in the browser).
 */

interface Body {
  to: string;
  subject: string;
  paragraphs: string[];
  action?: { label: string; url: string };
  after?: string[];
}

function compose(body: Body): MailMessage {
  const text = [
    ...body.paragraphs,
    ...(body.action ? [`${body.action.label}:\n${body.action.url}`] : []),
    ...(body.after ?? []),
    `— ${PRODUCT_NAME}`,
  ].join('\n\n');
  const p = (line: string) => `<p style="margin:0 0 16px">${escapeHtml(line)}</p>`;
  const html = [
    '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>',
    '<body style="font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:15px;line-height:1.5;color:#1f2933;max-width:560px;margin:0 auto;padding:24px">',
    `<p style="margin:0 0 24px;font-weight:600">${escapeHtml(PRODUCT_NAME)}</p>`,
    ...body.paragraphs.map(p),
    ...(body.action
      ? [
          `<p style="margin:0 0 16px"><a href="${escapeHtml(body.action.url)}" style="display:inline-block;padding:10px 16px;background:#2563eb;color:#fff;border-radius:6px;text-decoration:none">${escapeHtml(body.action.label)}</a></p>`,
          `<p style="margin:0 0 16px;font-size:13px;color:#52606d">Or open this address: ${escapeHtml(body.action.url)}</p>`,
        ]
      : []),
    ...(body.after ?? []).map(p),
    '</body></html>',
  ].join('\n');
  return { to: body.to, subject: body.subject, text, html };
}

const link = (path: string, token?: string) => `${mailLinkOrigin()}${path}${token ? `#${token}` : ''}`;

export function verificationMail(to: string, token: string): MailMessage {
  return compose({
    to,
    subject: `Verify your e-mail address for ${PRODUCT_NAME}`,
    paragraphs: [`Someone, probably you, created a ${PRODUCT_NAME} account with this address. Verify the address to finish: until then the account cannot create API keys, calendar feeds or webhook endpoints.`],
    action: { label: 'Verify my e-mail address', url: link('/verify-email', token) },
    after: ['The link works once, for 24 hours. If you did not create this account, ignore this message: nothing happens without the link.'],
  });
}

export function signUpAttemptMail(to: string): MailMessage {
  return compose({
    to,
    subject: `Someone tried to sign up to ${PRODUCT_NAME} with your address`,
    paragraphs: [
      `Someone, perhaps you, tried to create a ${PRODUCT_NAME} account with this address. You already have an account, so no new one was created and nothing changed.`,
      'If it was you and you do not remember your password, you can set a new one:',
    ],
    action: { label: 'Reset my password', url: link('/forgot-password') },
    after: ['If it was not you, ignore this message.'],
  });
}

export function passwordResetMail(to: string, token: string): MailMessage {
  return compose({
    to,
    subject: `Reset your ${PRODUCT_NAME} password`,
    paragraphs: [`Someone, probably you, asked to reset the password of the ${PRODUCT_NAME} account with this address.`],
    action: { label: 'Set a new password', url: link('/reset-password', token) },
    after: [
      'The link works once, for 30 minutes, and stops working when a newer one is sent or the password changes. Setting a new password signs you out everywhere.',
      'If you did not ask for this, ignore this message: your password stays as it is.',
    ],
  });
}

export function passwordChangedMail(to: string, change: { at: Date; clientAddress?: string }): MailMessage {
  const when = `${change.at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const from = change.clientAddress && change.clientAddress !== SHARED_CLIENT_BUCKET ? ` from the address ${change.clientAddress}` : '';
  return compose({
    to,
    subject: `Your ${PRODUCT_NAME} password was changed`,
    paragraphs: [`The password of your ${PRODUCT_NAME} account was changed on ${when}${from}. Every session signed in before was ended.`],
    after: [`If you did not change it, reset your password now at ${link('/forgot-password')} and check your API keys, calendar feeds and webhook endpoints.`],
  });
}

export function accountDeletedMail(to: string, deletion: { at: Date; clientAddress?: string }): MailMessage {
  const when = `${deletion.at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const from = deletion.clientAddress && deletion.clientAddress !== SHARED_CLIENT_BUCKET ? ` from the address ${deletion.clientAddress}` : '';
  return compose({
    to,
    subject: `Your ${PRODUCT_NAME} account was deleted`,
    paragraphs: [
      `Your ${PRODUCT_NAME} account with this address was deleted on ${when}${from}, as asked in its settings with its password or a fresh GitHub sign-in.`,
      'Its personal contracts, API keys, calendar feeds and webhook endpoints are gone, and every session has ended. Contracts it added to an organisation stay with that organisation.',
    ],
    after: ['This cannot be undone. You can create a new account with this address at any time.'],
  });
}
