import type { Metadata } from 'next';
import { ApiReference } from '@/components/api-reference';
import { scalarBundleUrl } from '@/server/docs/scalar-bundle';
import { OPENAPI_DOCUMENT_PATH } from '@/lib/api';

export const metadata: Metadata = { title: 'API reference' };

// The bundle's versioned URL is read from node_modules when the page is served.
export const dynamic = 'force-dynamic';

const DOCUMENT_URL = OPENAPI_DOCUMENT_PATH;

export default function ApiReferencePage() {
  return (
    // Not <main>: Scalar renders its own main landmark inside.
    <div>
      <noscript>
        <p className="page">
          The interactive reference needs JavaScript. The OpenAPI 3.1 document is at <a href={DOCUMENT_URL}>{DOCUMENT_URL}</a>.
        </p>
      </noscript>
      <ApiReference bundleUrl={scalarBundleUrl()} documentUrl={DOCUMENT_URL} />
    </div>
  );
}
