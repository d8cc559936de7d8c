import { versionsOf, type ChangelogEntry } from '@/server/rest/changelog';
import { deprecationProblems } from '@/server/rest/deprecation-policy';
import type { Deprecation } from '@/server/rest/deprecations';
import { breakingChanges, type BreakingChange } from './breaking-changes';
import { canonical, contractOf, versionOf, type Json } from './contract';

/**
 * The committed baseline of /api/v1 and the rules that tie it to the changelog
 * (docs/api-changes.md, "The breaking-change check"):
 *
 * 1. no breaking change from the baseline to today's document;
 * 2. the baseline was made at today's version (the newest changelog entry's): an entry
 *    added without regenerating the baseline fails, so that the next change of the
 *    contract cannot slip in under it;
 * 3. at the same version the contract is the same: a change of the document (an addition
 *    too) without a new changelog entry fails;
 * 4. the deprecations meet their policy (server/rest/deprecation-policy.ts).
 *
 * `--update-baseline` writes today's contract, and refuses when rule 3 or 4 fails, or when
 * there are breaking changes and no new entry is of kind `removed` or `changed` (the
 * entry that says why they are acceptable).
 */

export const BASELINE_FILE = 'openapi/v1-baseline.json';
/** The server URL the baseline's document is built with (as scripts/write-openapi.ts); it is not part of the contract. */
export const BASELINE_BASE_URL = 'https://api.contractdata.app';
const NOTE =
  'The contract of /api/v1 (its OpenAPI document without prose) at info.version. Written by `npm run openapi:breaking -- --update-baseline` in the commit of the changelog entry it goes with; never edited by hand (docs/api-changes.md).';

export interface Inputs {
  /** Today's OpenAPI document (its info.version is the changelog's). */
  document: Json;
  /** The committed baseline; undefined when there is none yet. */
  baseline: Json | undefined;
  changelog: readonly ChangelogEntry[];
  deprecations: readonly Deprecation[];
}

export interface Verdict {
  /** Breaking changes from the baseline to today's contract. */
  breaking: BreakingChange[];
  /** What fails the check, in words (breaking changes included). */
  problems: string[];
  /** What --update-baseline would write. */
  contract: Json;
}

const describe = (changes: BreakingChange[]) => changes.map((c) => `${c.at}: ${c.message}`);

/** The check CI runs (`npm run openapi:breaking`). */
export function checkBaseline({ document, baseline, changelog, deprecations }: Inputs): Verdict {
  const contract = contractOf(document);
  const problems = deprecationProblems(deprecations, changelog);
  if (!baseline) return { breaking: [], problems: [...problems, `${BASELINE_FILE} is missing: write it with \`npm run openapi:breaking -- --update-baseline\``], contract };
  const breaking = breakingChanges(baseline, contract);
  problems.push(...describe(breaking));
  const [made, now] = [versionOf(baseline), versionOf(contract)];
  if (made !== now) {
    problems.push(`${BASELINE_FILE} was made at version ${made}, and the changelog is at ${now}: run \`npm run openapi:breaking -- --update-baseline\` and commit it with the entry`);
  } else if (canonical(baseline) !== canonical(contract)) {
    problems.push(
      `the OpenAPI document changed since ${BASELINE_FILE} (version ${now}) without a changelog entry: add one to server/rest/changelog.ts, then \`npm run changelog:generate\` and \`npm run openapi:breaking -- --update-baseline\``,
    );
  }
  return { breaking, problems, contract };
}

/** What `--update-baseline` may write: the contract with its note, or the reasons it refuses. */
export function updateBaseline({ document, baseline, changelog, deprecations }: Inputs): { problems: string[]; breaking: BreakingChange[]; file?: Json } {
  const contract = contractOf(document);
  const problems = deprecationProblems(deprecations, changelog);
  const breaking = baseline ? breakingChanges(baseline, contract) : [];
  if (baseline) {
    const [made, now] = [versionOf(baseline), versionOf(contract)];
    const versions = versionsOf(changelog);
    const newer = changelog.slice(0, Math.max(0, versions.indexOf(made)));
    if (made === now && canonical(baseline) !== canonical(contract)) {
      problems.push(`the document changed but the changelog has no new entry (still ${now}): add one to server/rest/changelog.ts first`);
    }
    if (!versions.includes(made)) problems.push(`${BASELINE_FILE} was made at ${made}, which is no version of the changelog`);
    if (breaking.length > 0 && !newer.some((e) => e.kind === 'removed' || e.kind === 'changed')) {
      problems.push(
        'breaking changes need a new changelog entry of kind `removed` (of something deprecated past its sunset) or `changed` (saying why it is acceptable); otherwise they belong in /api/v2:',
        ...describe(breaking).map((line) => `  ${line}`),
      );
    }
  }
  if (problems.length > 0) return { problems, breaking };
  return { problems, breaking, file: { 'x-baseline': NOTE, ...contract } };
}
