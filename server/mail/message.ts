/** One e-mail, as queued: the recipient, the subject, and its plain-text and HTML parts. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** The first link of a message's text (what the development log shows). */
export function firstLinkOf(text: string): string | undefined {
  return /https?:\/\/\S+/.exec(text)?.[0];
}
