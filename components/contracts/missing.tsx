import styles from './contracts.module.css';

/**
 * An empty cell: a dash for the eye, words for screen readers, which would otherwise read
 * "dash" or nothing. Before extraction there is nothing to show; after it, extraction did
 * not find the value in the file.
 */
export function Missing({ extracted, label }: { extracted?: boolean; label?: string }) {
  return (
    <span className={styles.missing}>
      <span aria-hidden="true">—</span>
      <span className="visually-hidden">{label ?? (extracted ? 'not found in the file' : 'not extracted yet')}</span>
    </span>
  );
}
