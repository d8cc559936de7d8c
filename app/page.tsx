import Link from 'next/link';
import { currentUser } from '@/server/auth/session';

export default async function HomePage() {
  const user = await currentUser();
  return (
    <main className="page">
      <section className="hero">
        <h1>Your contracts, as data.</h1>
        <p className="muted" style={{ fontSize: '1.1rem', maxWidth: 640 }}>
          Every contract you upload is read for its expiration and renewal dates, auto-renewal terms, value,
          parties and summary. The Contract Data API gives your scripts, spreadsheets and systems read-only access to
          that data: list, fetch and export it as CSV.
        </p>
        <div style={{ display: 'flex', flexWrap: 'wrap', gap: '0.75rem', marginTop: '1.25rem' }}>
          <Link className="btn btn-primary" href={user ? '/settings/api-keys' : '/sign-in'}>
            {user ? 'Manage API keys' : 'Sign in to get an API key'}
          </Link>
          <Link className="btn" href="/docs/api">
            Read the API reference
          </Link>
        </div>
      </section>
      <section className="grid-3">
        <div className="card card-body">
          <h2>List and filter</h2>
          <p className="muted">Page through personal and organisation contracts, filtered by status or organisation.</p>
        </div>
        <div className="card card-body">
          <h2>Every extracted field</h2>
          <p className="muted">Dates, auto-renewal, value and currency, parties, summary and a confidence score.</p>
        </div>
        <div className="card card-body">
          <h2>CSV export</h2>
          <p className="muted">Stream every matching contract into a spreadsheet-safe CSV file.</p>
        </div>
      </section>
      <section style={{ marginTop: '2rem' }}>
        <h2>Try it</h2>
        <pre className="code">{`curl -H "X-API-Key: $CDAPI_KEY" ${'https://your-host'}/api/v1/contracts?limit=10`}</pre>
      </section>
    </main>
  );
}
