import type { ContractStatus } from '@/lib/contracts';
import { STATUS_LABELS } from './format';
import styles from './contracts.module.css';

/** Each status has its own shape as well as its colour and its word, so none relies on colour alone. */
const ICONS: Record<ContractStatus, string> = {
  completed: '✓',
  pending: '○',
  processing: '◐',
  failed: '✕',
};

export function StatusBadge({ status }: { status: ContractStatus }) {
  return (
    <span className={`badge badge-${status} ${styles.status}`}>
      <span aria-hidden="true" className={styles.statusIcon}>
        {ICONS[status]}
      </span>
      {STATUS_LABELS[status]}
    </span>
  );
}
