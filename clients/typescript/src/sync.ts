import type { Client } from 'openapi-fetch';
import { ContractDataApiError } from './errors.js';
import type { components, paths } from './generated/openapi.js';

/**
 * Keeping a copy of the contracts a key may see, exactly (the API guide, "The event list"):
 * an export to start from, then the event list from the export's `X-Events-Cursor`, its
 * events applied in order as upserts and deletions. Started again from an export when
 * there is no cursor, when the cursor has expired (`410 cursor_expired`) and after a
 * `contracts.reset`; `access.reduced` drops the organisations named, `access.expanded`
 * exports them in.
 *
 * The export is read as NDJSON (`"format": "ndjson"`): each line is the get-one detail, so
 * the copy holds what GET /contracts/{id} answers, and events and export agree. Except for
 * the computed `next_renewal_date` and `notice_deadline`: they are as of the event's (or
 * the export's) UTC day, and days passing change them in the API with no event.
 */

type ContractDetail = components['schemas']['ContractDetail'];
type Event = components['schemas']['Event'];
type ErrorBody = components['schemas']['Error'];
type Awaitable<T> = T | Promise<T>;
/** What a page's access.expanded events brought in: its owner's personal contracts (everything is exported then), organisations. */
interface Incoming {
  everything: boolean;
  organizations: Set<string>;
}

/** Where the copy lives: a map, a table, a spreadsheet. */
export interface SyncStore {
  get(id: string): Awaitable<ContractDetail | undefined>;
  upsert(contract: ContractDetail): Awaitable<void>;
  delete(id: string): Awaitable<void>;
  clear(): Awaitable<void>;
  /**
   * Every id the store holds (optional). With it, `access.reduced` deletes just the
   * contracts of the organisations named (read with `get`); without it, the sync clears
   * the store and starts again from an export.
   */
  ids?(): Awaitable<Iterable<string>>;
}

export interface SyncOptions {
  store: SyncStore;
  /** The cursor the previous sync returned; none: start from an export. */
  cursor?: string | null | undefined;
  /** Called with the cursor to keep after each page applied (so a crash resumes there). */
  onCursor?: ((cursor: string) => Awaitable<void>) | undefined;
  /** Events per page, 1 to 100 (default 100). */
  pageSize?: number | undefined;
}

export interface SyncResult {
  /** Save it and pass it to the next sync. */
  cursor: string;
  /** Events applied. */
  events: number;
  /** Exports read (the start, restarts, organisations that came in). */
  exports: number;
}

/** Brings the store up to date and returns the cursor to keep. */
export async function sync(client: Client<paths>, options: SyncOptions): Promise<SyncResult> {
  const { store } = options;
  const limit = options.pageSize ?? 100;
  const result: SyncResult = { cursor: '', events: 0, exports: 0 };

  const exportInto = async (filters: { organization_id?: string }): Promise<string> => {
    result.exports++;
    return exportLines(client, filters, (contract) => store.upsert(contract));
  };
  const restart = async (): Promise<string> => {
    await store.clear();
    return exportInto({});
  };

  /**
   * An organisation that came in at this event may have left again since (a later
   * access.reduced in the list says so): then the export of it is a 403, and nothing is
   * to be fetched.
   */
  const exportIfStillReached = async (organization_id: string): Promise<void> => {
    try {
      await exportInto({ organization_id });
    } catch (error) {
      if (!(error instanceof ContractDataApiError && error.status === 403 && error.code === 'forbidden')) throw error;
    }
  };

  let cursor = options.cursor || (await restart());
  for (;;) {
    const { data, error, response } = await client.GET('/events', { params: { query: { cursor, limit } } });
    if (error) {
      if (response.status === 410 && error.error.code === 'cursor_expired') {
        cursor = await restart();
        continue;
      }
      throw new ContractDataApiError(response.status, error);
    }
    const incoming: Incoming = { everything: false, organizations: new Set() };
    let restarted = false;
    for (const event of data.data.events) {
      result.events++;
      const outcome = await apply(event, incoming);
      if (outcome === 'restart') {
        // The rest of this page is older than the export that starts again.
        cursor = await restart();
        restarted = true;
        break;
      }
    }
    if (restarted) continue;
    // What came in on this page, in one export (the export quota is 10 an hour by default),
    // before the cursor moves past it: exported now, so newer than the page's events.
    await fetchIncoming(incoming);
    cursor = data.data.pagination.next_cursor;
    await options.onCursor?.(cursor);
    if (!data.data.pagination.has_more) return { ...result, cursor };
  }

  async function fetchIncoming(incoming: Incoming): Promise<void> {
    if (incoming.everything || incoming.organizations.size > 1) await exportInto({});
    else for (const organization_id of incoming.organizations) await exportIfStillReached(organization_id);
  }

  async function apply(event: Event, incoming: Incoming): Promise<'restart' | undefined> {
    const { contract, organization_ids: organizations = [], personal = false } = event.data;
    switch (event.type) {
      case 'contract.created':
      case 'contract.updated':
      case 'contract.extraction_completed':
        // The contract as it was then; a later event of it, or none, brings it up to date.
        await store.upsert(contract as ContractDetail);
        return undefined;
      case 'contract.deleted':
        await store.delete(contract!.id);
        return undefined;
      case 'contracts.reset':
        return 'restart';
      case 'access.reduced': {
        if (!store.ids) return 'restart';
        for (const id of [...(await store.ids())]) {
          const held = await store.get(id);
          if (held && (held.organization_id === null ? personal : organizations.includes(held.organization_id))) await store.delete(id);
        }
        return undefined;
      }
      case 'access.expanded':
        // Fetched at the end of the page (fetchIncoming).
        if (personal) incoming.everything = true;
        for (const organization_id of organizations) incoming.organizations.add(organization_id);
        return undefined;
      default:
        // A type this client does not know yet: nothing to apply.
        return undefined;
    }
  }
}

/** Streams an NDJSON export into `onContract`, line by line; returns its X-Events-Cursor. */
async function exportLines(client: Client<paths>, filters: { organization_id?: string }, onContract: (contract: ContractDetail) => Awaitable<void>): Promise<string> {
  const { data, error, response } = await client.POST('/contracts/export', { body: { ...filters, format: 'ndjson' }, parseAs: 'stream' });
  if (error) throw new ContractDataApiError(response.status, error as ErrorBody);
  if (!data) throw new Error('The export answered without a body.');
  const cursor = response.headers.get('X-Events-Cursor');
  if (!cursor) throw new Error('The export answered without X-Events-Cursor: the API is older than the event list.');
  // openapi-fetch types a streamed body by its documented content (text); it is the stream.
  const reader = (data as unknown as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let pending = '';
  for (;;) {
    const { value, done } = await reader.read();
    pending += decoder.decode(value, { stream: !done });
    let end: number;
    while ((end = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (line) await onContract(JSON.parse(line) as ContractDetail);
    }
    if (done) break;
  }
  if (pending.trim()) throw new Error('The export ended in the middle of a line: it was cut short; sync again.');
  return cursor;
}
