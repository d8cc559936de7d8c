import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MIGRATIONS_FOLDER } from '@/db/client';

/**
 * The committed migrations before `index` (0000 up to index - 1) as a folder of their own,
 * for the test of a migration: open a database with them (createTestDatabase's
 * migrationsFolder), write rows as the older schema had them, then migrate the rest.
 */
export function migrationsBefore(index: number): { folder: string; remove(): void } {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'cda-migrations-'));
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { idx: number }[] };
  journal.entries = journal.entries.filter((e) => e.idx < index);
  writeFileSync(journalFile, JSON.stringify(journal));
  return { folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}
