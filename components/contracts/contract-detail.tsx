import { describeDuration } from '@/lib/renewal-dates';
import { decisionInWords } from './renewal-words';
import Link from 'next/link';
import type { ReactNode } from 'react';
import type { ContractStatus } from '@/lib/contracts';
import type { ContractDetail } from '@/server/contracts/shape';
import { currencyName, formatDate, formatDateTime, formatFileSize, formatMoney, relativeDays } from './format';
import { Missing } from './missing';
import { StatusBadge } from './status-badge';
import styles from './contracts.module.css';

type ExtractedData = NonNullable<ContractDetail['data']>;

/** Every field of the API's contract detail, for people. */
export function ContractDetailView(props: { contract: ContractDetail; organizationName?: string; today: string }) {
  const { contract, organizationName, today } = props;
  const owner = contract.organization_id ? (organizationName ?? 'Organisation') : 'Personal';
  return (
    <article aria-labelledby="contract-title">
      <Link href="/contracts" className={styles.backLink}>
        ← All contracts
      </Link>
      <header className={styles.detailHeader}>
        <div>
          <h1 id="contract-title" className={styles.detailTitle}>
            {contract.title}
          </h1>
          <p className="muted">
            {owner} · {contract.file_name} · uploaded {formatDate(contract.created_at)}
          </p>
        </div>
        <StatusBadge status={contract.status} />
      </header>

      <div className={styles.detailGrid}>
        <section className="card" aria-labelledby="extracted-title">
          <div className="card-body">
            <h2 id="extracted-title">Extracted data</h2>
            {contract.data ? <Extracted data={contract.data} today={today} /> : <NotExtracted status={contract.status} />}
          </div>
        </section>

        <div className={styles.detailSide}>
          <section className="card" aria-labelledby="record-title">
            <div className="card-body">
              <h2 id="record-title">File and record</h2>
              <dl className={styles.fields}>
                <Item label="Contract ID">
                  <code className={styles.id}>{contract.id}</code>
                </Item>
                <Item label="File name">{contract.file_name}</Item>
                <Item label="File size">
                  {formatFileSize(contract.file_size)}{' '}
                  <span className="muted small">({contract.file_size.toLocaleString('en-GB')} bytes)</span>
                </Item>
                <Item label="Owner">
                  {owner}
                  {contract.organization_id ? <code className={`${styles.id} ${styles.subtle}`}>{contract.organization_id}</code> : null}
                </Item>
                <Item label="Uploaded">
                  <time dateTime={contract.created_at}>{formatDateTime(contract.created_at)}</time>
                </Item>
                <Item label="Last updated">
                  <time dateTime={contract.updated_at}>{formatDateTime(contract.updated_at)}</time>
                </Item>
              </dl>
            </div>
          </section>
          <section className="card" aria-labelledby="api-title">
            <div className="card-body">
              <h2 id="api-title">From the API</h2>
              <p className="muted small">The same record, with an API key from Settings → API Keys:</p>
              <pre className={styles.snippet}>
                <code>{`curl -H "X-API-Key: $CDAPI_KEY" \\\n  https://your-host/api/v1/contracts/${contract.id}`}</code>
              </pre>
            </div>
          </section>
        </div>
      </div>
    </article>
  );
}

function Extracted({ data, today }: { data: ExtractedData; today: string }) {
  const distance = (date: string | null) => {
    const text = date ? relativeDays(date, today, 365) : undefined;
    return text ? <span className="muted small"> · {text}</span> : null;
  };
  const orMissing = (value: ReactNode | null) => (value === null ? <Missing extracted /> : value);
  return (
    <>
      <dl className={`${styles.fields} ${styles.fieldsTwo}`}>
        <Item label="Expiration date">
          {orMissing(data.expiration_date && <time dateTime={data.expiration_date}>{formatDate(data.expiration_date)}</time>)}
          {distance(data.expiration_date)}
        </Item>
        <Item label="Renewal date">
          {orMissing(data.renewal_date && <time dateTime={data.renewal_date}>{formatDate(data.renewal_date)}</time>)}
          {distance(data.renewal_date)}
        </Item>
        <Item label="Auto-renewal">
          {orMissing(data.auto_renewal === null ? null : data.auto_renewal ? 'Yes, renews automatically' : 'No')}
        </Item>
        <Item label="Renewal term">{orMissing(data.renewal_term && describeDuration(data.renewal_term))}</Item>
        <Item label="Notice period">{orMissing(data.notice_period && describeDuration(data.notice_period))}</Item>
        <Item label="Next renewal">
          {orMissing(data.next_renewal_date && <time dateTime={data.next_renewal_date}>{formatDate(data.next_renewal_date)}</time>)}
          {distance(data.next_renewal_date)}
        </Item>
        <Item label="Act by">
          {orMissing(data.notice_deadline && <time dateTime={data.notice_deadline}>{formatDate(data.notice_deadline)}</time>)}
          {data.notice_deadline !== null && data.notice_deadline < today ? <span className="muted small"> · missed: renews anyway</span> : distance(data.notice_deadline)}
        </Item>
        <Item label="Contract value">
          {orMissing(data.contract_value === null ? null : formatMoney(data.contract_value, data.currency))}
        </Item>
        <Item label="Currency">
          {orMissing(data.currency && (
            <>
              {data.currency} <span className="muted small">{currencyName(data.currency)}</span>
            </>
          ))}
        </Item>
        <Item label="Confidence">{orMissing(data.confidence_score === null ? null : <Confidence score={data.confidence_score} />)}</Item>
        <Item label="Provider">{orMissing(data.parties.provider)}</Item>
        <Item label="Client">{orMissing(data.parties.client)}</Item>
      </dl>
      <p className={`muted small ${styles.decision}`} data-testid="renewal-decision">
        {decisionInWords(data, today)}
      </p>
      <h3 className={styles.summaryTitle}>Summary</h3>
      {data.summary === null ? (
        <p className="muted">Extraction found no summary in this file.</p>
      ) : (
        <p className={styles.summary}>{data.summary}</p>
      )}
    </>
  );
}

/** The score as a percentage, a bar and a word: the bar alone would say nothing to a screen reader. */
function Confidence({ score }: { score: number }) {
  const level = score >= 0.85 ? 'high' : score >= 0.6 ? 'medium' : 'low';
  const words = { high: 'High', medium: 'Medium', low: 'Low: check against the file' }[level];
  return (
    <span className={styles.confidence}>
      <meter min={0} max={1} low={0.6} high={0.85} optimum={1} value={score} aria-hidden="true" />
      <span>
        {Math.round(score * 100)}% <span className="muted small">{words}</span>
      </span>
    </span>
  );
}

const NOT_EXTRACTED: Record<Exclude<ContractStatus, 'completed'>, string> = {
  pending: 'The file is waiting to be read. Its dates, value, parties and summary appear here once extraction has completed.',
  processing: 'The file is being read right now. Its dates, value, parties and summary appear here once extraction has completed.',
  failed: 'Extraction failed for this file, so it has no extracted data. The file itself is kept.',
};

function NotExtracted({ status }: { status: ContractStatus }) {
  return (
    <div className={styles.notExtracted}>
      <h3>Extraction not completed yet</h3>
      <p className="muted">{status === 'completed' ? '' : NOT_EXTRACTED[status]}</p>
      <p className="muted small">
        Until then the API returns <code>&quot;data&quot;: null</code> for this contract.
      </p>
    </div>
  );
}

function Item({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className={styles.fieldItem}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
