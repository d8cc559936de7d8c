import { readFileSync, writeFileSync } from 'node:fs';
import { CHANGELOG } from '@/server/rest/changelog';
import { CHANGELOG_FILE, changelogFile } from '@/server/rest/changelog-markdown';

/**
 * docs/changelog.md, written from the changelog's entries (server/rest/changelog.ts).
 *
 *   npm run changelog:generate              writes the file
 *   npm run changelog:generate -- --check   fails when the committed file differs
 *
 * tests/docs/changelog.test.ts makes the same comparison, so CI fails on a stale file.
 */

const mode = process.argv[2];
if (mode !== undefined && mode !== '--check') {
  console.error('Usage: tsx scripts/changelog-generate.ts [--check]');
  process.exit(2);
}
const generated = changelogFile(CHANGELOG);
if (mode === '--check') {
  let committed = '';
  try {
    committed = readFileSync(CHANGELOG_FILE, 'utf8');
  } catch {
    // A missing file is a difference like any other.
  }
  if (committed !== generated) {
    console.error(`${CHANGELOG_FILE} is out of date with server/rest/changelog.ts: run \`npm run changelog:generate\` and commit the result.`);
    process.exit(1);
  }
  console.log(`${CHANGELOG_FILE} matches server/rest/changelog.ts.`);
} else {
  writeFileSync(CHANGELOG_FILE, generated);
  console.log(`Wrote ${CHANGELOG_FILE} (${CHANGELOG.length} entries).`);
}
