import type { OrganizationChoice } from '../tokens/restriction-fields';
import { SubscribeInCalendar } from './subscribe-calendar';
import styles from './contracts.module.css';

/**
 * The list's actions: "Download CSV" (every contract of the list, with its filters and
 * sort, through the session: server/contracts/download.ts) and "Subscribe in calendar".
 *
 * The download is a plain link, not Next.js's <Link>: that one prefetches its target,
 * and a prefetch of the download would use up the download quota.
 */
export function ListActions({
  exportHref,
  total,
  totalExact = true,
  quota,
  organizations,
}: {
  exportHref: string;
  total: number;
  totalExact?: boolean;
  quota: { limit: number; window: string };
  /** The user's organisations, for the calendar feed's access choice. */
  organizations: readonly OrganizationChoice[];
}) {
  return (
    <div className={styles.listActions}>
      <div className={styles.listButtons}>
        <a className="btn" href={exportHref} aria-describedby="download-hint" data-testid="download-csv">
          Download CSV
        </a>
        <SubscribeInCalendar organizations={organizations} />
      </div>
      <p id="download-hint" className={`muted small ${styles.downloadHint}`}>
        {total === 0
          ? 'No contract matches: the CSV would hold its header row only'
          : `The CSV holds ${total === 1 ? 'the 1 contract' : `all ${totalExact ? '' : 'of the more than '}${total.toLocaleString('en-GB')} contracts`} of this list, in this order`}{' '}
        (up to {quota.limit} downloads per {quota.window}).
      </p>
    </div>
  );
}
