import { Fragment } from 'react';
import type { ContractTimeline } from '@/server/contracts/timeline';
import { formatDate, formatMoney, formatMonth } from './format';
import { Missing } from './missing';
import { UpcomingChart } from './upcoming-chart';
import styles from './contracts.module.css';

/**
 * The chart card of the contracts page. Rendered on the server: the heading, the caption
 * that says what is counted, the totals and the figures table (the chart's text
 * alternative, which also serves readers without JavaScript); only the chart itself is
 * drawn in the browser.
 */
export function UpcomingRenewals({ timeline, organizationName }: { timeline: ContractTimeline; organizationName?: string }) {
  const { months, currencies, totalRenewals, totalExpirations, totalNotices, withoutValue } = timeline;
  // From today, not from the first of this month: dates already past are not upcoming.
  const period = `${formatDate(timeline.from)} to the end of ${formatMonth(months[months.length - 1]!.month)}`;
  const whose = organizationName ? `${organizationName}’s completed contracts` : 'Completed contracts, personal and of your organisations';
  const empty = totalRenewals + totalExpirations + totalNotices === 0;

  return (
    <section className={`card ${styles.upcoming}`} aria-labelledby="upcoming-title">
      <div className={styles.upcomingHeader}>
        <div>
          <h2 id="upcoming-title">Upcoming renewals, expirations and notice deadlines</h2>
          <p className="muted small" id="upcoming-caption">
            {period} (UTC) · {whose}. Of the filters below, only Organisation applies to this chart.
          </p>
        </div>
        <dl className={styles.totals} id="upcoming-totals">
          <div>
            <dt>Renewals</dt>
            <dd data-testid="upcoming-renewals">{totalRenewals}</dd>
          </div>
          <div>
            <dt>Expirations</dt>
            <dd data-testid="upcoming-expirations">{totalExpirations}</dd>
          </div>
          <div>
            <dt>Act by</dt>
            <dd data-testid="upcoming-notices">{totalNotices}</dd>
          </div>
        </dl>
      </div>

      {empty ? (
        <p className={styles.chartEmpty}>Nothing renews, expires or needs notice from today to the end of {formatMonth(months[months.length - 1]!.month)}.</p>
      ) : (
        <figure className={styles.figure} aria-labelledby="upcoming-title" aria-describedby="upcoming-caption upcoming-totals">
          {/* Without JavaScript the chart cannot be drawn: its space is given back to the table's disclosure. */}
          <noscript>
            <style>{`.${styles.chart}{display:none}`}</style>
            <p className="muted small">The chart needs JavaScript. Its figures are in the table below.</p>
          </noscript>
          <UpcomingChart timeline={{ months, currencies }} />
        </figure>
      )}

      <details className={styles.figures}>
        <summary>Show the figures as a table</summary>
        <div className={styles.tableScroll}>
          <FiguresTable timeline={timeline} />
        </div>
      </details>
      {withoutValue > 0 ? (
        <p className="muted small">
          {withoutValue === 1 ? 'One renewal or expiration has' : `${withoutValue} renewals or expirations have`} no stated value
          or currency: {withoutValue === 1 ? 'it is' : 'they are'} counted, but not in the values per currency.
        </p>
      ) : null}
    </section>
  );
}

/** Every figure of the chart: counts per month, then each currency's values renewing and expiring. */
function FiguresTable({ timeline }: { timeline: ContractTimeline }) {
  const { months, currencies } = timeline;
  const money = (value: number, currency: string) => (value === 0 ? <Missing label="none" /> : formatMoney(value, currency));
  return (
    <table className={`data ${styles.figuresTable}`} data-testid="upcoming-figures">
      <caption className="visually-hidden">Renewals, expirations and notice deadlines per month, with contract values per currency</caption>
      <colgroup span={4} />
      {currencies.map((c) => (
        <colgroup key={c.currency} span={2} />
      ))}
      <thead>
        <tr>
          <th scope="col" rowSpan={currencies.length > 0 ? 2 : 1}>
            Month
          </th>
          <th scope="col" rowSpan={currencies.length > 0 ? 2 : 1} className="num">
            Renewals
          </th>
          <th scope="col" rowSpan={currencies.length > 0 ? 2 : 1} className="num">
            Expirations
          </th>
          <th scope="col" rowSpan={currencies.length > 0 ? 2 : 1} className="num">
            Act by
          </th>
          {currencies.map((c) => (
            <th key={c.currency} scope="colgroup" colSpan={2} className={styles.currencyHead}>
              {c.currency}
            </th>
          ))}
        </tr>
        {currencies.length > 0 ? (
          <tr>
            {currencies.map((c) => (
              <Fragment key={c.currency}>
                <th scope="col" className="num">
                  Renewing
                </th>
                <th scope="col" className="num">
                  Expiring
                </th>
              </Fragment>
            ))}
          </tr>
        ) : null}
      </thead>
      <tbody>
        {months.map((m, i) => (
          <tr key={m.month}>
            <th scope="row">
              {formatMonth(m.month)}
              {/* The first month counts from today only. */}
              {i === 0 && !timeline.from.endsWith('-01') ? <span className="muted"> (from {formatDate(timeline.from)})</span> : null}
            </th>
            <td className="num">{m.renewals}</td>
            <td className="num">{m.expirations}</td>
            <td className="num">{m.notices}</td>
            {currencies.map((c) => (
              <Fragment key={c.currency}>
                <td className="num">{money(c.months[i]!.renewing, c.currency)}</td>
                <td className="num">{money(c.months[i]!.expiring, c.currency)}</td>
              </Fragment>
            ))}
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">Total</th>
          <td className="num">{timeline.totalRenewals}</td>
          <td className="num">{timeline.totalExpirations}</td>
          <td className="num">{timeline.totalNotices}</td>
          {currencies.map((c) => (
            <Fragment key={c.currency}>
              <td className="num">{money(c.totalRenewing, c.currency)}</td>
              <td className="num">{money(c.totalExpiring, c.currency)}</td>
            </Fragment>
          ))}
        </tr>
      </tfoot>
    </table>
  );
}
