import 'server-only';
import { changelogPageUrl, changelogUrl, versionsOf, type ChangeKind, type ChangelogEntry } from './changelog';

/**
 * The changelog (./changelog.ts) written as Markdown: the file docs/changelog.md, and the
 * "Changelog" section of the OpenAPI document's introduction, which the reference page
 * renders. Both are derived, never edited.
 */

export const KIND_LABEL: Record<ChangeKind, string> = {
  release: 'Release',
  added: 'Added',
  changed: 'Changed',
  deprecated: 'Deprecated',
  removed: 'Removed',
  fixed: 'Fixed',
};

export const CHANGELOG_FILE = 'docs/changelog.md';

/** docs/changelog.md: one section per entry, with the entry's anchor as an explicit id. */
export function changelogFile(entries: readonly ChangelogEntry[]): string {
  const versions = versionsOf(entries);
  const sections = entries.map((entry, i) =>
    [`<a id="${entry.anchor}"></a>`, '', `## ${versions[i]} · ${entry.date} · ${KIND_LABEL[entry.kind]}: ${entry.title}`, '', entry.body, ''].join('\n'),
  );
  return [
    '# API changelog',
    '',
    '<!-- Generated from server/rest/changelog.ts by `npm run changelog:generate`. Edit that file, not this one: tests/docs/changelog.test.ts fails when they differ. -->',
    '',
    '## What this is for',
    '',
    'For integrators keeping a client up to date with `/api/v1`: what changed, in which version,',
    'and whether it is an addition, a change, a fix or a deprecation.',
    '',
    'What changed in `/api/v1` since the specification, newest first. Each heading starts with',
    'the version the change brought, which is the OpenAPI document\'s `info.version` from then on.',
    'The rules these changes follow, and what counts as breaking, are in',
    '[api-changes.md](api-changes.md). Every deployment shows the same entries in its API',
    'reference (`/docs/api`, section "Changelog") and at `/docs/changelog`, where the deprecation',
    '`Link` headers point.',
    '',
    ...sections,
  ].join('\n');
}

/** The introduction's section: every entry as a list item, linking to its anchor on the deployment. */
export function changelogSection(entries: readonly ChangelogEntry[], origin: string): string {
  const versions = versionsOf(entries);
  const items = entries.map(
    (entry, i) =>
      `- **${versions[i]}** (${entry.date}) ${KIND_LABEL[entry.kind]}: **${entry.title}**. ${entry.body.replace(/\n\n/g, ' ')} ([permalink](${changelogUrl(origin, entry.anchor)}))`,
  );
  const page = changelogPageUrl(origin);
  return ['## Changelog', `Newest first; \`info.version\` is the newest entry's version. Each entry has its own address on [${page}](${page}).`, '', ...items].join('\n');
}
