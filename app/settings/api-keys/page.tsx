import type { Metadata } from 'next';
import Link from 'next/link';
import { RequestSearch } from '@/components/key-activity/request-search';
import { ApiKeysManager } from '@/components/tokens/api-keys-manager';
import { toTokenRow } from '@/components/tokens/types';
import { organizationsOf, tokensPage } from '@/server/access/pages';
import { requireUser } from '@/server/auth/session';

export const metadata: Metadata = { title: 'API Keys' };

export default async function ApiKeysPage() {
  const user = await requireUser('/settings/api-keys');
  const [keys, organizations] = await Promise.all([tokensPage(user, 'api_key'), organizationsOf(user)]);
  return (
    <section aria-labelledby="api-keys-title">
      <h2 id="api-keys-title" style={{ fontSize: '1.3rem' }}>
        API Keys
      </h2>
      <p className="muted" style={{ maxWidth: 680 }}>
        An API key lets a script, a spreadsheet or another system read your contract data: by default your personal contracts
        and the contracts of every organisation you belong to. Give each key only what it needs: what it may read, whether it
        may export, and the addresses it may be used from. Keys are read-only. Send the key in the <code>X-API-Key</code> header (or as{' '}
        <code>Authorization: Bearer</code>); see the <Link href="/docs/api">API reference</Link> for the endpoints and examples.
      </p>
      <ApiKeysManager
        initialKeys={keys.map(toTokenRow)}
        organizations={organizations.map((o) => ({ id: o.id, name: o.name, role: o.role }))}
      />
      <div className="card" style={{ marginTop: '1.5rem' }}>
        <div className="card-body">
          <RequestSearch />
          <p className="muted small" style={{ margin: 0 }}>
            Open a key to see its usage and its last 1,000 requests.
          </p>
        </div>
      </div>
    </section>
  );
}
