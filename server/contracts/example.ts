/**
 * One realistic contract, in the shapes the API answers with: the OpenAPI document's
 * examples (server/rest/openapi-examples.ts) and the contract of webhook test events
 * (server/webhooks/endpoints.ts) show the same one.
 */

export const leaseSummary = {
  id: '3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c',
  title: 'Office Lease — Berlin',
  status: 'completed',
  file_name: 'office-lease-berlin.pdf',
  file_size: 5500000,
  created_at: '2026-09-29T09:00:00.000Z',
  updated_at: '2026-09-29T10:00:00.000Z',
  organization_id: 'ae0bd8f6-9f24-4bf8-8398-17aeb94aa72f',
};

export const leaseData = {
  expiration_date: '2029-09-30',
  renewal_date: '2029-06-30',
  notice_period: 'P6M',
  renewal_term: 'P3Y',
  next_renewal_date: '2029-06-30',
  notice_deadline: '2028-12-30',
  auto_renewal: true,
  contract_value: 420000,
  currency: 'EUR',
  parties: { provider: 'Spree Immobilien GmbH', client: 'Acme Corp' },
  summary: 'Five-year lease of the third floor at Friedrichstraße 12, renewing for three years unless cancelled six months ahead.',
  confidence_score: 0.94,
};

/** A completed contract as get-one shows it (also the contract of webhook test events). */
export const exampleContract = { ...leaseSummary, data: leaseData };
