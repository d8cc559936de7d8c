type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Json;
}

function typeOf(schema: Json | undefined): string {
  if (!schema) return '';
  if (Array.isArray(schema.enum)) return (schema.enum as string[]).map((v) => JSON.stringify(v)).join(' | ');
  const parts = [String(schema.type ?? (schema.anyOf ? 'union' : 'object'))];
  if (schema.format) parts.push(`(${String(schema.format)})`);
  if (schema.minimum !== undefined || schema.maximum !== undefined) {
    parts.push(`${schema.minimum ?? ''}..${schema.maximum ?? ''}`);
  }
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.join(' ');
}

function curlFor(baseUrl: string, method: string, path: string, op: Json): string {
  // An operation without security (the calendar feed) is opened by the token in its path, not a key.
  if (Array.isArray(op.security) && op.security.length === 0) {
    return `curl "${baseUrl}${path.replace('{token}', '$FEED_TOKEN')}" \\\n  -o contracts.ics`;
  }
  const url = `${baseUrl}${path.replace('{id}', '3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c')}`;
  if (method === 'post') {
    return `curl -X POST "${url}" \\\n  -H "X-API-Key: $CONTRACT_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"renewing_within_days": 90, "sort": "renewal_date", "bom": true}' \\\n  -o contracts.csv`;
  }
  const query = path === '/contracts' ? '?expiring_within_days=90&sort=expiration_date&limit=20' : '';
  return `curl "${url}${query}" \\\n  -H "X-API-Key: $CONTRACT_API_KEY"`;
}

/** A readable rendering of the served OpenAPI document, with copy-paste curl examples. */
export function ApiReference({ doc }: { doc: Json }) {
  const baseUrl = ((doc.servers as Json[] | undefined)?.[0]?.url as string) ?? '';
  const paths = doc.paths as Record<string, Record<string, Json>>;
  return (
    <div style={{ display: 'flex', flexDirection: 'column', gap: '1.5rem' }}>
      <div className="card card-body">
        <h2>Authentication</h2>
        <p>
          Send an API key in the <code>X-API-Key</code> header of every request. Create keys under{' '}
          <a href="/settings/api-keys">Settings → API Keys</a>. A missing, malformed, unknown, expired or revoked key gets{' '}
          <code>401</code>.
        </p>
        <h2>Errors</h2>
        <p>
          Every error is JSON: <code>{`{"success": false, "error": {"code", "message", "details"}, "request_id"}`}</code>. Every
          response carries <code>X-Request-Id</code>.
        </p>
        <h2>Rate limits</h2>
        <p>
          60 requests per minute per key for list and get-one; 10 exports per hour per key, counted separately. Responses carry{' '}
          <code>X-RateLimit-Limit</code>, <code>X-RateLimit-Remaining</code>, <code>X-RateLimit-Reset</code>; a <code>429</code>{' '}
          carries <code>Retry-After</code> in seconds.
        </p>
        <p className="small muted">
          Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1).
        </p>
      </div>
      {Object.entries(paths).flatMap(([path, item]) =>
        Object.entries(item).map(([method, op]) => {
          const parameters = (op.parameters as Parameter[] | undefined) ?? [];
          const responses = op.responses as Record<string, Json>;
          return (
            <section key={`${method} ${path}`} className="card card-body" id={String(op.operationId ?? path)}>
              <h2>
                <span className={`badge ${method === 'get' ? 'badge-pending' : 'badge-completed'}`}>{method.toUpperCase()}</span>{' '}
                <code>/api/v1{path}</code> · {String(op.summary ?? '')}
              </h2>
              <p className="muted">{String(op.description ?? '')}</p>
              {parameters.length > 0 ? (
                <table className="data" style={{ marginBottom: '1rem' }}>
                  <thead>
                    <tr>
                      <th scope="col">Parameter</th>
                      <th scope="col">In</th>
                      <th scope="col">Type</th>
                      <th scope="col">Description</th>
                    </tr>
                  </thead>
                  <tbody>
                    {parameters.map((p) => (
                      <tr key={p.name}>
                        <td>
                          <code>{p.name}</code>
                          {p.required ? ' (required)' : ''}
                        </td>
                        <td>{p.in}</td>
                        <td className="small">{typeOf(p.schema)}</td>
                        <td className="small">{p.description ?? String(p.schema?.description ?? '')}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : null}
              <p className="small">
                <strong>Responses:</strong>{' '}
                {Object.entries(responses).map(([status, r]) => (
                  <span key={status} title={String(r.description ?? '')} style={{ marginRight: '0.75rem' }}>
                    <code>{status}</code> {status === '200' ? 'OK' : ''}
                  </span>
                ))}
              </p>
              <pre className="code">{curlFor(baseUrl, method, path, op)}</pre>
            </section>
          );
        }),
      )}
    </div>
  );
}
