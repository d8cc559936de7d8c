'use client';

import { Modal } from '@/components/modal';
import type { LoggedRequest } from '@/lib/key-activity';

const exact = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'long', timeZone: 'UTC' });

/** One logged request, every field, in a dialog. */
export function RequestDetails({ request, onClose }: { request: LoggedRequest; onClose: () => void }) {
  const rows: [string, string][] = [
    ['Request id', request.requestId],
    ['Key', request.keyName],
    ['Time', exact.format(new Date(request.at))],
    ['Request', `${request.method} ${request.path}`],
    ['Status', `${request.status}${request.errorCode ? ` (${request.errorCode})` : ''}`],
    ['Duration', `${request.durationMs} ms`],
    ['Bytes sent', String(request.bytes)],
    ['Client address', request.clientAddress ?? 'unknown'],
    ['User agent', request.userAgent ?? 'none'],
  ];
  return (
    <Modal
      title="Request"
      onClose={onClose}
      footer={
        <button type="button" className="btn" onClick={onClose}>
          Close
        </button>
      }
    >
      <dl data-testid="request-details" style={{ display: 'grid', gridTemplateColumns: 'max-content minmax(0, 1fr)', gap: '0.35rem 1rem', margin: 0 }}>
        {rows.map(([label, value]) => (
          <div key={label} style={{ display: 'contents' }}>
            <dt className="muted small">{label}</dt>
            <dd style={{ margin: 0, wordBreak: 'break-all' }}>{label === 'Request id' || label === 'Request' ? <code>{value}</code> : value}</dd>
          </div>
        ))}
      </dl>
    </Modal>
  );
}
