import type { Metadata } from 'next';
import { headers } from 'next/headers';
import { ApiReference } from '@/components/api-reference';
import { openApiDocument } from '@/server/rest/openapi-document';

export const metadata: Metadata = { title: 'API reference' };

export default async function ApiReferencePage() {
  const h = await headers();
  const host = h.get('x-forwarded-host') ?? h.get('host') ?? 'localhost:3000';
  const proto = h.get('x-forwarded-proto') ?? (host.startsWith('localhost') || host.startsWith('127.') ? 'http' : 'https');
  const doc = openApiDocument(`${proto}://${host}`);
  return (
    <main className="page">
      <div className="page-header">
        <div>
          <h1>API reference</h1>
          <p className="muted">Contract Data API v1: read-only access to your contracts over HTTPS.</p>
        </div>
      </div>
      <ApiReference doc={doc} />
    </main>
  );
}
