'use client';

import Link from 'next/link';
import { MAX_ACTIVE_TOKENS } from '@/lib/tokens';
import { trpc } from '../trpc-client';
import { CreateKeyDialog, EditRestrictionsDialog, KeyRestrictions, NewKeyDialog, RollKeyFlow, type CreatedKey } from './api-key-dialogs';
import type { OrganizationChoice } from './restriction-fields';
import { TokenManager } from './token-manager';
import { toTokenRow, type TokenRow } from './types';

const loadKeys = async () => (await trpc.apiKeys.list.query()).map(toTokenRow);
const revokeKey = (id: string) => trpc.apiKeys.revoke.mutate({ id });

/** Settings → API Keys: the user's personal keys (an organisation's keys are on its page). */
export function ApiKeysManager({ initialKeys, organizations }: { initialKeys: TokenRow[]; organizations: OrganizationChoice[] }) {
  const adminOf = organizations.filter((o) => o.role === 'owner' || o.role === 'admin');
  return (
    <TokenManager<CreatedKey>
      initialRows={initialKeys}
      maxActive={MAX_ACTIVE_TOKENS.api_key}
      showExpiry
      detailHref={(key) => `/settings/api-keys/${key.id}`}
      load={loadKeys}
      revoke={revokeKey}
      headerExtra={
        adminOf.length > 0 ? (
          <p className="muted small" style={{ margin: 0 }}>
            Organisation keys are listed on the organisation&rsquo;s page:{' '}
            {adminOf.map((org, i) => (
              <span key={org.id}>
                {i > 0 ? ', ' : null}
                <Link href={`/settings/organizations/${org.id}`}>{org.name}</Link>
              </span>
            ))}
            .
          </p>
        ) : null
      }
      renderRestrictions={(row) => <KeyRestrictions row={row} />}
      rowActions={[
        {
          label: 'Roll',
          render: (row, { onClose, refresh }) => <RollKeyFlow row={row} onClose={onClose} onRolled={refresh} />,
        },
        {
          label: 'Edit',
          render: (row, { onClose, refresh }) => (
            <EditRestrictionsDialog
              row={row}
              organizations={organizations}
              onClose={onClose}
              onSaved={async () => {
                onClose();
                await refresh();
              }}
            />
          ),
        },
      ]}
      text={{
        plural: 'API keys',
        singular: 'API key',
        countNoun: 'keys',
        emptyText: 'Create your first key to call the Contract Data API from a script, a spreadsheet or another system.',
        rowTestId: 'api-key-row',
        revokeLabel: 'Revoke key',
        revokeText: (key) => (
          <>
            Requests that use <code>{key.hint}</code> will be refused from now on. This cannot be undone; the key stays listed as
            revoked.
          </>
        ),
      }}
      renderCreate={({ onClose, onCreated }) => <CreateKeyDialog organizations={organizations} onClose={onClose} onCreated={onCreated} />}
      renderCreated={(created, onClose) => <NewKeyDialog created={created} onClose={onClose} />}
    />
  );
}
