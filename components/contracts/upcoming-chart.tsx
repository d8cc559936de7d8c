'use client';

import { useId } from 'react';
import { Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from 'recharts';
import type { ContractTimeline, CurrencyTimeline } from '@/server/contracts/timeline';
import { currencyName, formatAxisMonth, formatMoney, formatMonth } from './format';
import styles from './contracts.module.css';

/**
 * The chart of upcoming renewals and expirations (recharts, drawn in the browser): the
 * counts per month, then one small panel per currency with the summed contract values,
 * because amounts in different currencies cannot be added or even share an axis.
 *
 * Renewals are solid, expirations hatched, notice deadlines outlined, so the series differ
 * by pattern as well as by colour. The same figures are in a table beside the chart (UpcomingRenewals).
 */

const RENEWAL = '#3b5bdb';
const EXPIRATION = '#e8590c';
const NOTICE = '#2b8a3e';
const GRID = '#e3e6eb';
const AXIS_TEXT = '#5b6472';
const TICK = { fill: AXIS_TEXT, fontSize: 12 };
const TOOLTIP_STYLE = {
  contentStyle: { borderRadius: 8, border: '1px solid #e3e6eb', boxShadow: '0 4px 12px rgba(16,24,40,.12)', fontSize: 13 },
  labelStyle: { fontWeight: 600, marginBottom: 4, color: '#111827' },
  cursor: { fill: '#f1f3f5' },
};

export function UpcomingChart({ timeline }: { timeline: Pick<ContractTimeline, 'months' | 'currencies'> }) {
  // One pattern per chart instance, referenced by every panel's expiration bars.
  const hatch = `hatch-${useId().replace(/[^a-zA-Z0-9-]/g, '')}`;
  const months = timeline.months.map((m) => ({ ...m, axis: formatAxisMonth(m.month), name: formatMonth(m.month) }));

  return (
    <div className={styles.chart}>
      <svg width="0" height="0" className={styles.defs} aria-hidden="true" focusable="false">
        <defs>
          <pattern id={hatch} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <rect width="6" height="6" fill={EXPIRATION} />
            <line x1="0" y1="0" x2="0" y2="6" stroke="#ffffff" strokeOpacity="0.6" strokeWidth="2.5" />
          </pattern>
        </defs>
      </svg>

      <ul className={styles.legend} aria-label="Legend">
        <li>
          <Swatch fill={RENEWAL} />
          Renewals (solid)
        </li>
        <li>
          <Swatch fill={`url(#${hatch})`} />
          Expirations (hatched)
        </li>
        <li>
          <Swatch fill="#ffffff" stroke={NOTICE} />
          Notice deadlines (outlined)
        </li>
      </ul>

      <div className={styles.countChart}>
        <BarChart
          responsive
          style={{ width: '100%', height: '100%' }}
          data={months}
          margin={{ top: 8, right: 8, bottom: 0, left: 0 }}
          barGap={2}
          title="Renewals, expirations and notice deadlines per month"
          desc="Number of contracts renewing, expiring and with a notice deadline in each of the next 12 months. Use the arrow keys to read each month."
        >
          <CartesianGrid vertical={false} stroke={GRID} />
          <XAxis dataKey="axis" tickLine={false} axisLine={{ stroke: '#c9ced6' }} tick={TICK} interval={0} />
          <YAxis allowDecimals={false} width={28} tickLine={false} axisLine={false} tick={TICK} />
          <Tooltip {...TOOLTIP_STYLE} labelFormatter={(_, payload) => payload?.[0]?.payload?.name ?? ''} />
          <Bar dataKey="renewals" name="Renewals" fill={RENEWAL} radius={[3, 3, 0, 0]} maxBarSize={22} isAnimationActive={false} />
          <Bar
            dataKey="expirations"
            name="Expirations"
            fill={`url(#${hatch})`}
            stroke={EXPIRATION}
            strokeWidth={1}
            radius={[3, 3, 0, 0]}
            maxBarSize={22}
            isAnimationActive={false}
          />
          <Bar dataKey="notices" name="Notice deadlines" fill="#ffffff" stroke={NOTICE} strokeWidth={2} radius={[3, 3, 0, 0]} maxBarSize={22} isAnimationActive={false} />
        </BarChart>
      </div>

      {timeline.currencies.length > 0 ? (
        <>
          <h3 className={styles.panelsTitle}>Contract value renewing and expiring, per currency</h3>
          <div className={styles.currencyGrid}>
            {timeline.currencies.map((series) => (
              <CurrencyPanel key={series.currency} series={series} hatch={hatch} />
            ))}
          </div>
        </>
      ) : null}
    </div>
  );
}

function CurrencyPanel({ series, hatch }: { series: CurrencyTimeline; hatch: string }) {
  const { currency } = series;
  const data = series.months.map((m) => ({ ...m, axis: formatAxisMonth(m.month), name: formatMonth(m.month) }));
  const money = (value: unknown) => formatMoney(Number(value), currency);
  return (
    <section className={styles.currencyPanel} aria-label={`${currency} values`}>
      <header className={styles.currencyHeader}>
        <h4>
          {currency} <span className="muted">{currencyName(currency)}</span>
        </h4>
        <p>
          <span className={styles.renewingTotal}>{headline(series.totalRenewing, currency)} renewing</span>
          <span className={styles.expiringTotal}>{headline(series.totalExpiring, currency)} expiring</span>
        </p>
      </header>
      <div className={styles.valueChart}>
        <BarChart
          responsive
          style={{ width: '100%', height: '100%' }}
          data={data}
          margin={{ top: 6, right: 4, bottom: 0, left: 0 }}
          barGap={1}
          title={`${currency} value renewing and expiring per month`}
          desc="Summed contract value of the contracts renewing and expiring in each month, in this currency only."
        >
          <CartesianGrid vertical={false} stroke={GRID} />
          <XAxis dataKey="axis" tickLine={false} axisLine={{ stroke: '#c9ced6' }} tick={{ ...TICK, fontSize: 11 }} interval={1} />
          <YAxis
            width="auto"
            tickLine={false}
            axisLine={false}
            tick={{ ...TICK, fontSize: 11 }}
            tickCount={4}
            tickFormatter={(v: number) => formatMoney(v, null, { compact: true })}
          />
          <Tooltip
            {...TOOLTIP_STYLE}
            labelFormatter={(_, payload) => payload?.[0]?.payload?.name ?? ''}
            formatter={(value, name) => [money(value), name]}
          />
          <Bar dataKey="renewing" name="Renewing" fill={RENEWAL} radius={[2, 2, 0, 0]} maxBarSize={14} isAnimationActive={false} />
          <Bar
            dataKey="expiring"
            name="Expiring"
            fill={`url(#${hatch})`}
            stroke={EXPIRATION}
            strokeWidth={1}
            radius={[2, 2, 0, 0]}
            maxBarSize={14}
            isAnimationActive={false}
          />
        </BarChart>
      </div>
    </section>
  );
}

/** A panel's total: exact below 10,000, rounded ("USD 1.4M") above, where cents stop mattering. */
function headline(value: number, currency: string): string {
  return formatMoney(value, currency, { compact: value >= 10_000 });
}

function Swatch({ fill, stroke }: { fill: string; stroke?: string }) {
  return (
    <svg width="14" height="14" aria-hidden="true" focusable="false" className={styles.swatch}>
      {stroke ? <rect x="1" y="1" width="12" height="12" rx="3" fill={fill} stroke={stroke} strokeWidth="2" /> : <rect width="14" height="14" rx="3" fill={fill} />}
    </svg>
  );
}
