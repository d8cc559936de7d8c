'use client';

import { useId, useState } from 'react';
import { ErrorAlert, errorMessage } from '@/components/error-alert';
import type { LoggedRequest } from '@/lib/key-activity';
import { trpc } from '../trpc-client';
import { RequestDetails } from './request-details';

/**
 * "Find a request": takes the request id of an answer (X-Request-Id, or an error body's
 * request_id) and opens that request, among every key the person may see.
 */
export function RequestSearch() {
  const [value, setValue] = useState('');
  const [found, setFound] = useState<LoggedRequest | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const inputId = useId();
  const hintId = useId();

  return (
    <form
      role="search"
      aria-label="Find a request by its id"
      onSubmit={async (event) => {
        event.preventDefault();
        setBusy(true);
        setError(null);
        try {
          setFound(await trpc.keyActivity.findRequest.query({ requestId: value.trim() }));
        } catch (e) {
          setError(errorMessage(e));
        } finally {
          setBusy(false);
        }
      }}
    >
      <div className="field">
        <label htmlFor={inputId}>Find a request by its id</label>
        <div style={{ display: 'flex', gap: '0.5rem', flexWrap: 'wrap' }}>
          <input
            id={inputId}
            aria-describedby={hintId}
            value={value}
            onChange={(e) => setValue(e.target.value)}
            placeholder="req_…"
            maxLength={100}
            spellCheck={false}
            autoComplete="off"
            style={{ flex: '1 1 16rem', minWidth: 0 }}
          />
          <button type="submit" className="btn" disabled={busy || value.trim() === ''}>
            Find
          </button>
        </div>
        <span id={hintId} className="hint">
          The <code>X-Request-Id</code> of an answer, or the <code>request_id</code> of an error body.
        </span>
      </div>
      <ErrorAlert message={error} />
      {found ? <RequestDetails request={found} onClose={() => setFound(null)} /> : null}
    </form>
  );
}
