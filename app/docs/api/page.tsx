import type { Metadata } from 'next';
import { headers } from 'next/headers';
import { ApiReference } from '@/components/api-reference';
import { openApiDocument } from '@/server/rest/openapi-document';
import { publicOrigin } from '@/server/rest/public-origin';

export const metadata: Metadata = { title: 'API reference' };

export default async function ApiReferencePage() {
  const doc = openApiDocument(publicOrigin(await headers()));
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
