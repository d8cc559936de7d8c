import type { Metadata } from 'next';
import Link from 'next/link';
import { Fragment, type ReactNode } from 'react';
import { CHANGELOG, versionsOf } from '@/server/rest/changelog';
import { KIND_LABEL } from '@/server/rest/changelog-markdown';
import { DEPRECATIONS } from '@/server/rest/deprecations';

export const metadata: Metadata = { title: 'API changelog' };

/**
 * /docs/changelog: the API's changelog (server/rest/changelog.ts), one section per entry
 * with the entry's anchor as its id. The deprecation `Link` headers of the API's answers
 * point here (`…/docs/changelog#anchor`), so the ids must never change.
 */

/** Plain text with `inline code`: the only Markdown the entries use. */
const inline = (text: string): ReactNode =>
  text.split('`').map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : <Fragment key={i}>{part}</Fragment>));

/** An entry's body: paragraphs split by a blank line. */
const paragraphs = (text: string): ReactNode => text.split('\n\n').map((paragraph, p) => <p key={p}>{inline(paragraph)}</p>);

export default function ChangelogPage() {
  const versions = versionsOf(CHANGELOG);
  return (
    <main className="page">
      <h1>API changelog</h1>
      <p className="muted">
        What changed in <code>/api/v1</code>, newest first. Each entry names the version it brought: the OpenAPI document&apos;s{' '}
        <code>info.version</code> from then on. See the <Link href="/docs/api">API reference</Link> for the API as it is now.
      </p>
      <p>
        Clients must ignore fields, enumeration values and webhook events they do not know: those are added without notice.
        Anything removed is deprecated first, at least 12 months ahead, and every answer to a request that uses it carries{' '}
        <code>Deprecation</code>, <code>Sunset</code> and a <code>Link</code> to its entry here.{' '}
        {DEPRECATIONS.length === 0
          ? 'Nothing is deprecated at the moment.'
          : `Deprecated now: ${DEPRECATIONS.map((d) => `${d.kind === 'parameter' ? `${d.operation}: ${d.name}` : `${d.schema}.${d.name}`} (gone after ${d.sunset})`).join('; ')}.`}
      </p>
      {CHANGELOG.map((entry, i) => (
        <section key={entry.anchor} id={entry.anchor}>
          <h2>{inline(entry.title)}</h2>
          <p className="muted">
            {versions[i]} · {entry.date} · {KIND_LABEL[entry.kind]} · <a href={`#${entry.anchor}`}>#{entry.anchor}</a>
          </p>
          {paragraphs(entry.body)}
        </section>
      ))}
    </main>
  );
}
