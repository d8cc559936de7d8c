import type { ChangelogEntry } from './changelog';
import type { Deprecation } from './deprecations';

/**
 * The rules a deprecation must meet (docs/api-changes.md): it is announced by a
 * `deprecated` changelog entry of the same day, and its sunset is at least 12 months
 * after that day. `npm run openapi:breaking` and tests/docs/deprecations.test.ts fail on
 * any problem this returns.
 */

export const MIN_NOTICE_MONTHS = 12;

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A YYYY-MM-DD that is a real day, as a UTC midnight; undefined otherwise. */
export function utcDay(text: string): Date | undefined {
  if (!DATE.test(text)) return undefined;
  const day = new Date(`${text}T00:00:00Z`);
  return Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text ? undefined : day;
}

/** The earliest sunset allowed for an announcement: the same day 12 months later (29 February: 1 March). */
export function earliestSunset(announced: Date): Date {
  const day = new Date(announced);
  day.setUTCMonth(day.getUTCMonth() + MIN_NOTICE_MONTHS);
  return day;
}

/** What names a deprecation in messages: "listContracts: parameter q", "ContractSummary.file_size". */
export const deprecationLabel = (d: Deprecation): string => (d.kind === 'parameter' ? `${d.operation}: parameter ${d.name}` : `field ${d.schema}.${d.name}`);

export function deprecationProblems(deprecations: readonly Deprecation[], changelog: readonly ChangelogEntry[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const d of deprecations) {
    const label = deprecationLabel(d);
    if (seen.has(label)) problems.push(`${label} is deprecated twice`);
    seen.add(label);
    const announced = utcDay(d.announced);
    const sunset = utcDay(d.sunset);
    if (!announced) problems.push(`${label}: announced "${d.announced}" is not a date YYYY-MM-DD`);
    if (!sunset) problems.push(`${label}: sunset "${d.sunset}" is not a date YYYY-MM-DD`);
    if (announced && sunset && sunset < earliestSunset(announced)) {
      const earliest = earliestSunset(announced).toISOString().slice(0, 10);
      problems.push(`${label}: sunset ${d.sunset} is less than ${MIN_NOTICE_MONTHS} months after its announcement on ${d.announced} (${earliest} at the earliest)`);
    }
    const entry = changelog.find((e) => e.anchor === d.changelog);
    if (!entry) problems.push(`${label}: no changelog entry with the anchor "${d.changelog}" (server/rest/changelog.ts)`);
    else if (entry.kind !== 'deprecated') problems.push(`${label}: the changelog entry "${d.changelog}" is "${entry.kind}", not "deprecated"`);
    else if (entry.date !== d.announced) problems.push(`${label}: announced ${d.announced}, but its changelog entry "${d.changelog}" is dated ${entry.date}`);
  }
  return problems;
}
