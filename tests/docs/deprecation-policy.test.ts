import { describe, expect, it } from 'vitest';
import { CHANGELOG, type ChangelogEntry } from '@/server/rest/changelog';
import { deprecationProblems, earliestSunset, utcDay } from '@/server/rest/deprecation-policy';
import { DEPRECATIONS, type Deprecation } from '@/server/rest/deprecations';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { deprecationsByOperation } from '@/server/rest/openapi-deprecations';

/**
 * The deprecation policy (docs/api-changes.md): every entry of the registry
 * (server/rest/deprecations.ts) has a `deprecated` changelog entry of its day and a sunset
 * at least 12 months later, and names something the document has. The production registry
 * is checked here and by `npm run openapi:breaking`; tests/api/deprecations.test.ts puts
 * entries in to check the document and the headers.
 */

const announcement: ChangelogEntry = { date: '2026-12-01', anchor: 'deprecate-q', kind: 'deprecated', title: '`q` deprecated', body: 'Use `search`.' };
const changelog = [announcement, ...CHANGELOG];
const q: Deprecation = { kind: 'parameter', operation: 'listContracts', name: 'q', announced: '2026-12-01', sunset: '2027-12-01', changelog: 'deprecate-q' };

describe('the deprecation policy', () => {
  it('holds for the registry as committed', () => {
    expect(deprecationProblems(DEPRECATIONS, CHANGELOG)).toEqual([]);
    expect(() => deprecationsByOperation(buildOpenApiDocument(''), DEPRECATIONS)).not.toThrow();
  });

  it('accepts a deprecation announced by its changelog entry with 12 months\' notice', () => {
    expect(deprecationProblems([q], changelog)).toEqual([]);
    expect(deprecationProblems([{ ...q, sunset: '2030-01-01' }], changelog)).toEqual([]);
  });

  it('refuses a sunset less than 12 months after the announcement', () => {
    expect(deprecationProblems([{ ...q, sunset: '2027-11-30' }], changelog)).toEqual([
      'listContracts: parameter q: sunset 2027-11-30 is less than 12 months after its announcement on 2026-12-01 (2027-12-01 at the earliest)',
    ]);
    expect(earliestSunset(utcDay('2028-02-29')!).toISOString().slice(0, 10)).toBe('2029-03-01');
  });

  it('refuses a deprecation without its changelog entry, with another kind of entry, or of another day', () => {
    expect(deprecationProblems([q], CHANGELOG)).toEqual(['listContracts: parameter q: no changelog entry with the anchor "deprecate-q" (server/rest/changelog.ts)']);
    expect(deprecationProblems([{ ...q, changelog: 'webhooks' }], CHANGELOG)).toEqual(['listContracts: parameter q: the changelog entry "webhooks" is "added", not "deprecated"']);
    expect(deprecationProblems([{ ...q, announced: '2026-12-02', sunset: '2027-12-02' }], changelog)).toEqual([
      'listContracts: parameter q: announced 2026-12-02, but its changelog entry "deprecate-q" is dated 2026-12-01',
    ]);
  });

  it('refuses dates that are not days, and the same thing deprecated twice', () => {
    expect(deprecationProblems([{ ...q, sunset: '2027-02-30' }], changelog)).toEqual(['listContracts: parameter q: sunset "2027-02-30" is not a date YYYY-MM-DD']);
    expect(deprecationProblems([q, q], changelog)).toEqual(['listContracts: parameter q is deprecated twice']);
  });

  it('refuses, when the document is built, a deprecation of something the document does not have', () => {
    const doc = buildOpenApiDocument('');
    expect(() => deprecationsByOperation(doc, [{ ...q, name: 'stauts' }])).toThrow('listContracts has no query parameter or body field "stauts"');
    expect(() => deprecationsByOperation(doc, [{ ...q, operation: 'listContract' }])).toThrow('no operation "listContract"');
    expect(() => deprecationsByOperation(doc, [{ kind: 'field', schema: 'ContractSummary', name: 'size', announced: q.announced, sunset: q.sunset, changelog: q.changelog }])).toThrow(
      'no property "size" in the schema "ContractSummary"',
    );
  });
});
