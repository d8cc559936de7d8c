import Link from 'next/link';
import styles from '@/components/contracts/contracts.module.css';

/** The same answer for an id that does not exist and for one the user may not see. */
export default function ContractNotFound() {
  return (
    <main className="page">
      <Link href="/contracts" className={styles.backLink}>
        ← All contracts
      </Link>
      <div className={`card empty ${styles.notFound}`}>
        <h1>Contract not found</h1>
        <p className="muted">
          There is no contract with this address among yours: it may have been deleted, or it belongs to an account or an
          organisation you are not a member of.
        </p>
        <Link className="btn btn-primary" href="/contracts">
          Back to your contracts
        </Link>
      </div>
    </main>
  );
}
