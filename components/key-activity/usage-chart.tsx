'use client';

import { useId, useState } from 'react';
import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import { USAGE_OUTCOMES, type UsageBucket, type UsageOutcome } from '@/lib/key-activity';

/**
 * A key's requests over time (recharts, as the contracts page's chart), stacked by
 * outcome, by hour (48 hours) or by day (90 days), for list and get-one, the export, or
 * both. The same figures are in a table below it (for screen readers and exact numbers).
 */

const COLORS: Record<UsageOutcome, string> = { '2xx': '#2f9e44', '304': '#74c0fc', '4xx': '#f59f00', '429': '#e8590c', '5xx': '#c92a2a' };
const LABELS: Record<UsageOutcome, string> = { '2xx': '2xx', '304': '304 not modified', '4xx': '4xx (not 429)', '429': '429 rate limited', '5xx': '5xx' };
const TICK = { fill: '#5b6472', fontSize: 12 };

type Operation = 'all' | 'read' | 'export';
const OPERATION_LABELS: Record<Operation, string> = { all: 'All requests', read: 'List and get-one', export: 'Export' };

const hourFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', timeZone: 'UTC' });
const dayFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

function countsOf(bucket: UsageBucket, operation: Operation): Record<UsageOutcome, number> {
  if (operation !== 'all') return bucket[operation];
  return Object.fromEntries(USAGE_OUTCOMES.map((o) => [o, bucket.read[o] + bucket.export[o]])) as Record<UsageOutcome, number>;
}

export function UsageChart({ hours, days }: { hours: UsageBucket[]; days: UsageBucket[] }) {
  const [range, setRange] = useState<'hours' | 'days'>('hours');
  const [operation, setOperation] = useState<Operation>('all');
  const rangeId = useId();
  const operationId = useId();
  const buckets = range === 'hours' ? hours : days;
  const format = range === 'hours' ? hourFormat : dayFormat;
  const data = buckets.map((b) => ({ name: `${format.format(new Date(b.start))} UTC`, ...countsOf(b, operation) }));
  const visible = data.filter((row) => USAGE_OUTCOMES.some((o) => row[o] > 0));

  return (
    <div>
      <div style={{ display: 'flex', gap: '1rem', flexWrap: 'wrap' }}>
        <div className="field">
          <label htmlFor={rangeId}>Period</label>
          <select id={rangeId} value={range} onChange={(e) => setRange(e.target.value as 'hours' | 'days')}>
            <option value="hours">Last 48 hours, by hour</option>
            <option value="days">Last 90 days, by day</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={operationId}>Requests</label>
          <select id={operationId} value={operation} onChange={(e) => setOperation(e.target.value as Operation)}>
            {(Object.keys(OPERATION_LABELS) as Operation[]).map((op) => (
              <option key={op} value={op}>
                {OPERATION_LABELS[op]}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ul aria-label="Legend" style={{ display: 'flex', flexWrap: 'wrap', gap: '0.75rem', listStyle: 'none', padding: 0, fontSize: '0.85rem' }}>
        {USAGE_OUTCOMES.map((o) => (
          <li key={o} style={{ display: 'flex', alignItems: 'center', gap: '0.3rem' }}>
            <span aria-hidden="true" style={{ width: 12, height: 12, borderRadius: 3, background: COLORS[o], display: 'inline-block' }} />
            {LABELS[o]}
          </li>
        ))}
      </ul>
      <div style={{ width: '100%', height: 240 }} aria-hidden="true" data-testid="usage-chart">
        <BarChart responsive style={{ width: '100%', height: '100%' }} data={data} margin={{ top: 8, right: 8, bottom: 8, left: 0 }}>
          <CartesianGrid vertical={false} stroke="#e3e6eb" />
          <XAxis dataKey="name" tick={TICK} interval="preserveStartEnd" minTickGap={24} />
          <YAxis allowDecimals={false} tick={TICK} width={48} />
          <Tooltip />
          {USAGE_OUTCOMES.map((o) => (
            <Bar key={o} dataKey={o} name={LABELS[o]} stackId="outcome" fill={COLORS[o]} isAnimationActive={false} />
          ))}
        </BarChart>
      </div>
      <details>
        <summary>Show as a table</summary>
        {visible.length === 0 ? (
          <p className="muted small">No requests in this period.</p>
        ) : (
          <div style={{ overflowX: 'auto' }}>
            <table className="data" aria-label={`Requests ${range === 'hours' ? 'per hour' : 'per day'}, ${OPERATION_LABELS[operation].toLowerCase()}`} data-testid="usage-table">
              <thead>
                <tr>
                  <th scope="col">{range === 'hours' ? 'Hour' : 'Day'}</th>
                  {USAGE_OUTCOMES.map((o) => (
                    <th key={o} scope="col" className="num">
                      {LABELS[o]}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {visible.map((row) => (
                  <tr key={row.name}>
                    <th scope="row">{row.name}</th>
                    {USAGE_OUTCOMES.map((o) => (
                      <td key={o} className="num">
                        {row[o]}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </details>
    </div>
  );
}
