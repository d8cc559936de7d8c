'use client';

import { useId, useState } from 'react';
import { API_KEY_EXPIRY_CHOICES, DEFAULT_API_KEY_EXPIRY, MAX_ACTIVE_TOKENS, TOKEN_NAME_MAX_LENGTH } from '@/lib/tokens';
import { trpc } from '../trpc-client';
import { CreateDialog } from './create-dialog';
import { SecretOnceDialog } from './secret-once-dialog';
import { TokenManager } from './token-manager';
import { toTokenRow, type TokenRow } from './types';

const EXPIRY_LABELS: Record<string, string> = { '7': '7 days', '30': '30 days', '90': '90 days', '365': '1 year', never: 'Never' };

const loadKeys = async () => (await trpc.apiKeys.list.query()).map(toTokenRow);
const revokeKey = (id: string) => trpc.apiKeys.revoke.mutate({ id });

export function ApiKeysManager({ initialKeys }: { initialKeys: TokenRow[] }) {
  return (
    <TokenManager<{ name: string; key: string }>
      initialRows={initialKeys}
      maxActive={MAX_ACTIVE_TOKENS.api_key}
      showExpiry
      detailHref={(key) => `/settings/api-keys/${key.id}`}
      load={loadKeys}
      revoke={revokeKey}
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
      renderCreate={({ onClose, onCreated }) => <CreateKeyDialog onClose={onClose} onCreated={onCreated} />}
      renderCreated={(created, onClose) => (
        <SecretOnceDialog
          title="Your new API key"
          intro={
            <>
              The key <strong>{created.name}</strong> is ready.
            </>
          }
          warning="Copy it now and keep it somewhere safe. It will not be shown again: we only store a hash of it."
          secret={created.key}
          secretTestId="new-api-key"
          copyFailedText="Copying failed: the key is selected, press Ctrl+C."
          doneLabel="I have saved my key"
          onClose={onClose}
        >
          <p className="small muted">
            Use it in the <code>X-API-Key</code> header or as <code>Authorization: Bearer</code>. Never commit it to version control.
          </p>
        </SecretOnceDialog>
      )}
    />
  );
}

function CreateKeyDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (created: { name: string; key: string }) => Promise<void> }) {
  const [expiry, setExpiry] = useState<string>(String(DEFAULT_API_KEY_EXPIRY));
  const expiryId = useId();

  return (
    <CreateDialog
      title="Create API key"
      submitLabel="Create key"
      nameMaxLength={TOKEN_NAME_MAX_LENGTH}
      namePlaceholder="e.g. Nightly ETL"
      nameHint={`What the key is for, so you recognise it later (1 to ${TOKEN_NAME_MAX_LENGTH} characters).`}
      onClose={onClose}
      onSubmit={async (name) => {
        const expiresInDays = expiry === 'never' ? null : (Number(expiry) as 7 | 30 | 90 | 365);
        const result = await trpc.apiKeys.create.mutate({ name, expiresInDays });
        await onCreated({ name: result.token.name, key: result.secret });
      }}
    >
      <div className="field">
        <label htmlFor={expiryId}>Expires after</label>
        <select id={expiryId} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
          {API_KEY_EXPIRY_CHOICES.map((choice) => {
            const value = choice === null ? 'never' : String(choice);
            return (
              <option key={value} value={value}>
                {EXPIRY_LABELS[value]}
              </option>
            );
          })}
        </select>
      </div>
    </CreateDialog>
  );
}
