import { describe, expect, it } from 'vitest';
import { parseListParams } from '@/server/contracts/list-params';
import { FILTER_PARAMS, listHref, requestHref, without } from '@/lib/contract-list-url';
import { listContractsInput } from '@/server/contracts/schemas';

/**
 * The contracts page's URL state: the API's parameters, validated by the API's schema; a
 * refused parameter is reported with the API's own message and dropped, the others apply.
 */

const ORG = '3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c';
const OTHER_ORG = '9a9a9a9a-8a4d-4c2e-9b7a-0d1e2f3a4b5c';
const CALLER = { userId: '00000000-0000-4000-8000-000000000001', organizationIds: [ORG] };

/** The message the API's schema gives for one parameter alone. */
function apiMessage(params: Record<string, string | string[]>): string {
  const parsed = listContractsInput.safeParse(params);
  if (parsed.success) throw new Error('expected a refusal');
  return parsed.error.issues[0]!.message;
}

describe('parseListParams', () => {
  it('takes every filter, the sort and paging with the API’s names and types', () => {
    const { input, applied, errors } = parseListParams(
      {
        q: 'lease',
        status: 'completed',
        organization_id: ORG.toUpperCase(),
        expiring_within_days: '90',
        renewing_within_days: '30',
        expires_after: '2027-01-01',
        expires_before: '2027-12-31',
        renews_after: '2027-02-01',
        renews_before: '2027-11-30',
        auto_renewal: 'false',
        updated_since: '2026-11-01T00:00:00Z',
        sort: '-contract_value',
        limit: '10',
        offset: '20',
        utm_source: 'newsletter',
      },
      CALLER,
    );
    expect(errors).toEqual([]);
    expect(input).toEqual({
      q: 'lease',
      status: 'completed',
      organization_id: ORG,
      expiring_within_days: 90,
      renewing_within_days: 30,
      expires_after: '2027-01-01',
      expires_before: '2027-12-31',
      renews_after: '2027-02-01',
      renews_before: '2027-11-30',
      auto_renewal: false,
      updated_since: '2026-11-01T00:00:00Z',
      sort: '-contract_value',
      limit: 10,
      offset: 20,
    });
    // Links keep what was given (the organisation in lower case), unknown parameters dropped.
    expect(listHref(applied)).toBe(
      `/contracts?q=lease&status=completed&organization_id=${ORG}&expiring_within_days=90&renewing_within_days=30` +
        '&expires_after=2027-01-01&expires_before=2027-12-31&renews_after=2027-02-01&renews_before=2027-11-30' +
        '&auto_renewal=false&updated_since=2026-11-01T00%3A00%3A00Z&sort=-contract_value&limit=10&offset=20',
    );
  });

  it('uses a page of 25 by default and treats the empty fields of a GET form as absent', () => {
    const { input, applied, errors } = parseListParams({ q: '', status: '', expires_after: '', sort: '-created_at', limit: '' }, CALLER);
    expect(errors).toEqual([]);
    expect(input).toEqual({ sort: '-created_at', limit: 25, offset: 0 });
    expect(applied).toEqual({ sort: '-created_at' });
  });

  it('reports a refused parameter with the API’s message and applies the others', () => {
    const { input, applied, errors, refused, formValues } = parseListParams(
      { expiring_within_days: 'abc', status: 'completed', q: 'x\u0001y' },
      CALLER,
    );
    expect(errors).toEqual([
      { param: 'expiring_within_days', message: apiMessage({ expiring_within_days: 'abc' }) },
      { param: 'q', message: apiMessage({ q: 'x\u0001y' }) },
    ]);
    expect(errors[0]!.message).toBe('expiring_within_days must be an integer between 0 and 3650');
    expect(input).toEqual({ status: 'completed', limit: 25, offset: 0 });
    expect(applied).toEqual({ status: 'completed' });
    expect(refused).toEqual({ expiring_within_days: 'abc', q: 'x\u0001y' });
    // The refused search is shown again to be corrected; a refused choice has no option to show.
    expect(formValues).toEqual({ status: 'completed', q: 'x\u0001y' });
  });

  it('refuses a parameter given twice, as the API does, and a date that does not exist', () => {
    const { input, errors } = parseListParams({ status: ['pending', 'failed'], expires_before: '2027-02-30', sort: 'value' }, CALLER);
    expect(errors.map((e) => e.param)).toEqual(['status', 'expires_before', 'sort']);
    expect(errors[0]!.message).toBe('status must be given only once');
    expect(errors[1]!.message).toBe(apiMessage({ expires_before: '2027-02-30' }));
    expect(errors[2]!.message).toMatch(/^sort must be one of: created_at, -created_at, /);
    expect(input).toEqual({ limit: 25, offset: 0 });
  });

  it('an invalid page size falls back to the page’s 25, not the API’s 50', () => {
    const { input, errors } = parseListParams({ limit: '500', offset: '-1' }, CALLER);
    expect(errors.map((e) => e.param)).toEqual(['limit', 'offset']);
    expect(input).toMatchObject({ limit: 25, offset: 0 });
  });

  it('refuses an organisation the caller is not a member of with the API’s 403 message', () => {
    const { input, applied, errors } = parseListParams({ organization_id: OTHER_ORG, status: 'pending' }, CALLER);
    expect(errors).toEqual([{ param: 'organization_id', message: 'You are not a member of this organisation.' }]);
    expect(input.organization_id).toBeUndefined();
    expect(applied).toEqual({ status: 'pending' });
  });
});

describe('links', () => {
  it('the sign-in round trip keeps the request as given, repeated and unknown parameters included', () => {
    expect(requestHref({ status: ['pending', 'failed'], q: 'a b', utm: 'x', empty: undefined })).toBe(
      '/contracts?status=pending&status=failed&q=a+b&utm=x',
    );
    expect(requestHref({})).toBe('/contracts');
  });

  it('removing a filter keeps the others and starts again at the first page', () => {
    const applied = { status: 'completed', q: 'lease', sort: 'title', limit: '10', offset: '30' };
    expect(listHref(without(applied, 'q'))).toBe('/contracts?status=completed&sort=title&limit=10');
    expect(listHref(without(applied, ...FILTER_PARAMS))).toBe('/contracts?sort=title&limit=10');
    expect(listHref({})).toBe('/contracts');
  });
});
