import type { Database } from '@/db/client';
import type { Sort } from '@/db/queries/contracts/expressions';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import type { CallerScope } from '@/server/access/scope';
import { utcToday } from '@/server/dates';
import { pagedStream } from '@/server/http/paged-stream';
import { countExportRows } from '@/server/observability/metrics';
import { tracedPages } from '@/server/observability/tracing';
import { csvHeaderLine, csvLinesWriter, UTF8_BOM, type DateFormat, type ExportFormat } from './csv';
import { contractsInPages } from './service';
import { toDetail, type ContractDetail, type ExportColumn } from './shape';

/** Contracts read per keyset page of an export. */
const PAGE_SIZE = 1000;

export interface CsvExportRequest {
  filters: ContractFilters;
  sort?: Sort;
  columns?: readonly ExportColumn[];
  /** Starts the file with a UTF-8 byte order mark (for Excel). */
  bom?: boolean;
  /** How timestamps are written (./csv.ts). */
  dateFormat?: DateFormat;
  /** csv (default) or ndjson: one detail per line (./csv.ts, EXPORT_FORMATS). */
  format?: ExportFormat;
}

/**
 * The CSV (or NDJSON) file of every contract the scope sees that matches the request, as a 200
 * response streamed a keyset page at a time, pulled by the client: the API's export
 * (server/rest/export.ts) and the contracts page's "Download CSV"
 * (./download.ts) answer with it. The first page is read before the response is built,
 * so that a 403 or a database failure there is still the caller's error answer.
 */
export async function csvExportResponse(
  db: Database,
  scope: CallerScope,
  request: CsvExportRequest,
  requestId: string,
  responseHeaders: Headers,
): Promise<Response> {
  // With tracing on, a span per page read, with its row count (docs/operations.md, "Traces").
  const pages = tracedPages(contractsInPages(db, scope, request.filters, PAGE_SIZE, request.sort), 'export page', (rows) => rows.length);
  const ndjson = request.format === 'ndjson';
  const lines = ndjson ? (details: readonly ContractDetail[]) => details.map((d) => `${JSON.stringify(d)}\n`).join('') : csvLinesWriter(request.columns, request.dateFormat);
  // The filters' day (their windows and the renewal decisions they read), so the rows and their dates agree.
  const today = request.filters.today ?? utcToday();
  const stream = pagedStream({
    first: await pages.next(),
    pages,
    head: ndjson ? '' : `${request.bom ? UTF8_BOM : ''}${csvHeaderLine(request.columns)}`,
    render: (rows) => {
      countExportRows(rows.length);
      // One "today" for the whole file: an export that runs past midnight UTC stays one day's answer.
      return lines(rows.map((row) => toDetail(row, today)));
    },
    label: 'export',
    requestId,
  });
  responseHeaders.set('Content-Type', ndjson ? 'application/x-ndjson; charset=utf-8' : 'text/csv; charset=utf-8');
  responseHeaders.set('Content-Disposition', `attachment; filename="contracts-${utcToday()}.${ndjson ? 'ndjson' : 'csv'}"`);
  return new Response(stream, { status: 200, headers: responseHeaders });
}
