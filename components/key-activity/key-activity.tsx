'use client';

import { USAGE_OUTCOMES, type LoggedRequest } from '@/lib/key-activity';
import type { KeyUsage } from '@/server/usage/service';
import { RelativeTime } from '../tokens/time';
import { RequestLog } from './request-log';
import { RequestSearch } from './request-search';
import { UsageChart } from './usage-chart';

/** Settings → API Keys → a key: its usage, last use, and its request log. */
export function KeyActivity({ initial }: { initial: { usage: KeyUsage; requests: LoggedRequest[]; nextCursor: string | null } }) {
  const { usage } = initial;
  const total = (op: 'read' | 'export') => USAGE_OUTCOMES.reduce((sum, o) => sum + usage.totals[op][o], 0);
  return (
    <div style={{ display: 'grid', gap: '1.5rem' }}>
      <div className="card">
        <div className="card-body">
          <h3>Usage</h3>
          <dl data-testid="usage-totals" style={{ display: 'grid', gridTemplateColumns: 'max-content minmax(0, 1fr)', gap: '0.3rem 1rem' }}>
            <dt className="muted">List and get-one, 90 days</dt>
            <dd style={{ margin: 0 }}>
              {total('read')} ({USAGE_OUTCOMES.map((o) => `${usage.totals.read[o]} ${o}`).join(', ')})
            </dd>
            <dt className="muted">Export, 90 days</dt>
            <dd style={{ margin: 0 }}>
              {total('export')} ({USAGE_OUTCOMES.map((o) => `${usage.totals.export[o]} ${o}`).join(', ')})
            </dd>
            <dt className="muted">Last used</dt>
            <dd style={{ margin: 0 }} data-testid="last-used">
              {usage.lastUsed ? (
                <>
                  <RelativeTime iso={usage.lastUsed.at} fallback="Never" /> from {usage.lastUsed.clientAddress ?? 'an unknown address'}
                  {usage.lastUsed.userAgent ? (
                    <>
                      {' '}
                      with <code>{usage.lastUsed.userAgent}</code>
                    </>
                  ) : null}
                </>
              ) : (
                'Never'
              )}
            </dd>
          </dl>
          <UsageChart hours={usage.hours} days={usage.days} />
        </div>
      </div>
      <div className="card">
        <div className="card-body">
          <h3>Requests</h3>
          <p className="muted small">The last 1,000 requests of this key, kept 7 days. Addresses and user agents as the API saw them.</p>
          <RequestSearch />
          <RequestLog keyId={usage.key.id} initial={initial.requests} initialCursor={initial.nextCursor} />
        </div>
      </div>
    </div>
  );
}
