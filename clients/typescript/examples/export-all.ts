/**
 * Lists your contracts, pages through all of them, and exports them to a CSV file,
 * waiting out rate limits (429 with Retry-After) instead of failing.
 *
 *   CONTRACT_API_URL=https://contracts.example.com/api/v1 \
 *   CDAPI_KEY=cdapi_... \
 *   npx tsx examples/export-all.ts [contracts.csv] [--status=completed] [--page-size=100]
 *
 * Prints what it does to stdout and each wait to stderr; exits 1 on an API error.
 */
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import {
  ContractDataApiError,
  createContractDataClient,
  type ContractDataClient,
  type ContractStatus,
  type ContractSummary,
} from '../src/index.js';

/** The largest page the API serves. */
const MAX_PAGE_SIZE = 100;

/** The filters this example takes; the list and the export accept many more (see the reference). */
interface Filters {
  status?: ContractStatus;
}

/**
 * Every contract matching `filters`, page by page, in the list's order: each page's
 * `pagination.next_cursor` asks for the next one (the same filters go with it), until it is
 * null. A cursor page costs the API the same however deep it is, and contracts added while
 * paging neither shift nor repeat rows, as `offset` would.
 */
async function* pages(client: ContractDataClient, filters: Filters, pageSize: number): AsyncGenerator<ContractSummary[]> {
  let cursor: string | undefined;
  do {
    const { data, error, response } = await client.GET('/contracts', {
      params: { query: { ...filters, limit: pageSize, ...(cursor ? { cursor } : {}) } },
    });
    if (error) throw new ContractDataApiError(response.status, error);
    if (data.data.contracts.length > 0) yield data.data.contracts;
    cursor = data.data.pagination.next_cursor ?? undefined;
  } while (cursor);
}

function parseArguments(argv: string[]): { file: string; filters: Filters; pageSize: number } {
  let file = 'contracts.csv';
  let pageSize = MAX_PAGE_SIZE;
  const filters: Filters = {};
  for (const arg of argv) {
    const status = /^--status=(.+)$/.exec(arg)?.[1];
    const size = /^--page-size=(.+)$/.exec(arg)?.[1];
    if (size !== undefined) {
      pageSize = Number(size);
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
        throw new Error(`--page-size must be an integer from 1 to ${MAX_PAGE_SIZE}`);
      }
    } else if (status) {
      const allowed: ContractStatus[] = ['pending', 'processing', 'completed', 'failed'];
      const match = allowed.find((s) => s === status);
      if (!match) throw new Error(`--status must be one of ${allowed.join(', ')}`);
      filters.status = match;
    } else if (arg.startsWith('--')) {
      throw new Error(`unknown option ${arg}`);
    } else {
      file = arg;
    }
  }
  return { file, filters, pageSize };
}

async function main(): Promise<void> {
  const apiKey = process.env.CDAPI_KEY;
  if (!apiKey) throw new Error('Set CDAPI_KEY to an API key from Settings → API Keys.');
  const baseUrl = process.env.CONTRACT_API_URL ?? 'http://localhost:3000/api/v1';
  const { file, filters, pageSize } = parseArguments(process.argv.slice(2));

  const client = createContractDataClient({
    baseUrl,
    apiKey,
    retry: {
      maxRetries: 5,
      // The export's limit is per hour: a script that runs unattended may wait that long.
      maxWaitSeconds: 3600,
      onRetry: ({ status, waitSeconds, attempt }) =>
        console.error(`HTTP ${status}: waiting ${waitSeconds} s as Retry-After asks (retry ${attempt})`),
    },
  });

  // 1. The first page, as a program would show it.
  const first = await client.GET('/contracts', { params: { query: { ...filters, limit: 5 } } });
  if (first.error) throw new ContractDataApiError(first.response.status, first.error);
  const { contracts, pagination } = first.data.data;
  console.log(`${pagination.total} contracts; the newest ${contracts.length}:`);
  for (const c of contracts) console.log(`  ${c.id}  ${c.status.padEnd(10)}  ${c.title}`);

  // 2. Every page.
  const byStatus = new Map<string, number>();
  let seen = 0;
  let pageCount = 0;
  for await (const page of pages(client, filters, pageSize)) {
    pageCount++;
    for (const c of page) byStatus.set(c.status, (byStatus.get(c.status) ?? 0) + 1);
    seen += page.length;
  }
  const counts = [...byStatus].map(([status, n]) => `${status} ${n}`).join(', ');
  console.log(`Paged through ${seen} contracts in ${pageCount} pages (${counts || 'none'}).`);

  // 3. The CSV export of the same filters, streamed to the file. A UTF-8 byte order mark
  //    makes Excel read accents correctly; drop `bom` for other consumers.
  const exported = await client.POST('/contracts/export', { body: { ...filters, bom: true }, parseAs: 'stream' });
  if (exported.error) throw new ContractDataApiError(exported.response.status, exported.error);
  if (!exported.data) throw new Error('The export answered without a body.');
  // openapi-fetch types the body as the DOM's ReadableStream; in Node it is the same object.
  await pipeline(Readable.fromWeb(exported.data as NodeReadableStream<Uint8Array>), createWriteStream(file));
  console.log(`Exported to ${file} (${(await stat(file)).size} bytes).`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
