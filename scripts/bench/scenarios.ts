/** What the benchmark measures: one request shape per scenario, each at every connection count. */

/** typical_restricted: the typical caller's key restricted to what it sees anyway (below). */
export type Caller = 'typical' | 'typical_restricted' | 'heavy' | 'export_small' | 'export_large';

export interface Scenario {
  id: string;
  title: string;
  kind: 'requests' | 'export';
  caller: Caller;
  method: 'GET' | 'POST';
  /** Path and query below the server's origin; `{contract}` is replaced by the get-one fixture. */
  path: string;
  body?: string;
}

export function scenarios(exportSizes: { small: number; large: number }): Scenario[] {
  const k = (n: number) => (n >= 1000 ? `${Math.round(n / 1000)}k` : String(n));
  return [
    { id: 'list-typical-50', title: 'list, typical caller, limit 50', kind: 'requests', caller: 'typical', method: 'GET', path: '/api/v1/contracts?limit=50' },
    { id: 'list-typical-100', title: 'list, typical caller, limit 100', kind: 'requests', caller: 'typical', method: 'GET', path: '/api/v1/contracts?limit=100' },
    { id: 'list-heavy-50', title: 'list, heavy caller, limit 50', kind: 'requests', caller: 'heavy', method: 'GET', path: '/api/v1/contracts?limit=50' },
    { id: 'list-heavy-100', title: 'list, heavy caller, limit 100', kind: 'requests', caller: 'heavy', method: 'GET', path: '/api/v1/contracts?limit=100' },
    { id: 'list-heavy-offset-5000', title: 'list, heavy caller, limit 50 at offset 5000', kind: 'requests', caller: 'heavy', method: 'GET', path: '/api/v1/contracts?limit=50&offset=5000' },
    { id: 'get-one', title: 'get one contract, typical caller', kind: 'requests', caller: 'typical', method: 'GET', path: '/api/v1/contracts/{contract}' },
    // A least-privilege key (issue 23) over the same visible contracts as the typical caller's
    // unrestricted key: access chosen (personal and its organisation), contracts:read only,
    // allowed addresses. Same answers, so any difference is what the restrictions cost.
    { id: 'restricted-list-50', title: 'list, typical caller, restricted key, limit 50', kind: 'requests', caller: 'typical_restricted', method: 'GET', path: '/api/v1/contracts?limit=50' },
    { id: 'restricted-get-one', title: 'get one contract, typical caller, restricted key', kind: 'requests', caller: 'typical_restricted', method: 'GET', path: '/api/v1/contracts/{contract}' },
    { id: `export-${k(exportSizes.small)}`, title: `export of ${exportSizes.small} rows`, kind: 'export', caller: 'export_small', method: 'POST', path: '/api/v1/contracts/export', body: '{}' },
    { id: `export-${k(exportSizes.large)}`, title: `export of ${exportSizes.large} rows`, kind: 'export', caller: 'export_large', method: 'POST', path: '/api/v1/contracts/export', body: '{}' },
  ];
}
