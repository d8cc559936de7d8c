import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { KeyActivity } from '@/components/key-activity/key-activity';
import { requireUser } from '@/server/auth/session';
import { keyActivityPage } from '@/server/usage/pages';

export const metadata: Metadata = { title: 'API key activity' };

export default async function ApiKeyPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireUser(`/settings/api-keys/${encodeURIComponent(id)}`);
  const page = await keyActivityPage(user, id);
  if (!page) notFound();
  return (
    <section aria-labelledby="key-title">
      <p className="small">
        <Link href="/settings/api-keys">← API Keys</Link>
      </p>
      <h2 id="key-title" style={{ fontSize: '1.3rem' }}>
        {page.usage.key.name} <code className="small muted">{page.usage.key.hint}</code>
      </h2>
      <KeyActivity initial={page} />
    </section>
  );
}
