import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Papa from 'papaparse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { setProcessDatabase } from '@/server/database';
import { handleApiRequest } from '@/server/rest/router';
import { apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

/**
 * The export as a script and a spreadsheet read it (issue 16): CRLF line ends, the byte
 * order mark only when asked for, dates as YYYY-MM-DD, timestamps as ISO 8601 or, with
 * date_format "excel", as YYYY-MM-DD HH:MM:SS in UTC. Python's csv module and datetime
 * read the file back (as a script would), and the instants must be the JSON API's.
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_EXPORT_PER_WINDOW: '1000' });

let handle: DatabaseHandle;
let key: string;
let dir: string;
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  key = (await newApiKey(handle.db, DEMO_USERS.bob.id)).key;
  dir = mkdtempSync(path.join(os.tmpdir(), 'cda-csv-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await handle?.close();
});

async function exportBytes(body: Record<string, unknown>): Promise<Buffer> {
  const res = await handleApiRequest(apiRequest('POST', '/contracts/export', { key, body: JSON.stringify(body) }));
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** Python reads the file as a script would: utf-8-sig (drops a BOM), csv.DictReader, datetime.fromisoformat. */
function readWithPython(file: string): { id: string; created_at: string; updated_at: string; expiration_date: string | null }[] {
  const script = `
import csv, json, sys
from datetime import date, datetime, timezone
with open(sys.argv[1], newline="", encoding="utf-8-sig") as f:
    rows = list(csv.DictReader(f))
def instant(text):
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).isoformat()
print(json.dumps([{
    "id": r["id"],
    "created_at": instant(r["created_at"]),
    "updated_at": instant(r["updated_at"]),
    "expiration_date": date.fromisoformat(r["expiration_date"]).isoformat() if r["expiration_date"] else None,
} for r in rows]))
`;
  return JSON.parse(execFileSync('python3', ['-c', script, file], { encoding: 'utf8' }));
}

describe('the CSV export for scripts and spreadsheets', () => {
  it('writes CRLF after every line, the BOM only when asked, and ISO 8601 by default', async () => {
    const plain = await exportBytes({});
    const text = plain.toString('utf8');
    expect(plain[0]).not.toBe(0xef);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/\r|\n(?=[0-9a-f]{8}-)/);
    const rows = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data;
    expect(rows.length).toBeGreaterThan(5);
    for (const row of rows) {
      expect(row.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      if (row.expiration_date) expect(row.expiration_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    const withBom = await exportBytes({ bom: true });
    expect([...withBom.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(withBom.subarray(3).equals(plain)).toBe(true);
  });

  it('gives a script the same instants and dates in both date formats, and Excel\'s form with date_format "excel"', async () => {
    const iso = await exportBytes({ bom: true });
    const excel = await exportBytes({ bom: true, date_format: 'excel' });
    const excelRows = Papa.parse<Record<string, string>>(excel.toString('utf8').slice(1), { header: true, skipEmptyLines: true }).data;
    for (const row of excelRows) {
      expect(row.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(row.updated_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    }
    writeFileSync(path.join(dir, 'iso.csv'), iso);
    writeFileSync(path.join(dir, 'excel.csv'), excel);
    const fromIso = readWithPython(path.join(dir, 'iso.csv'));
    const fromExcel = readWithPython(path.join(dir, 'excel.csv'));
    // The JSON API's values, to the second (the excel form has no milliseconds; the demo data has none either).
    const list = await send(apiRequest('GET', '/contracts?limit=100', { key }));
    const api = new Map((list.json as { data: { contracts: { id: string; created_at: string }[] } }).data.contracts.map((c) => [c.id, c]));
    expect(fromIso).toEqual(fromExcel);
    expect(fromIso).toHaveLength(api.size);
    for (const row of fromIso) expect(new Date(row.created_at).toISOString()).toBe(api.get(row.id)!.created_at);
    // Only the timestamp columns differ between the two files.
    const isoLines = iso.toString('utf8').split('\r\n');
    const excelLines = excel.toString('utf8').split('\r\n');
    expect(excelLines.length).toBe(isoLines.length);
    expect(excelLines.map((line) => line.replace(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/g, 'T'))).toEqual(
      isoLines.map((line) => line.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, 'T')),
    );
  });

  it('refuses an unknown date_format by name', async () => {
    const res = await send(apiRequest('POST', '/contracts/export', { key, body: '{"date_format":"us"}' }));
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: { code: 'invalid_request', details: [{ param: 'date_format', message: 'date_format must be one of: iso, excel' }] } });
  });
});
