import { logger } from '@/server/observability/logger';

/**
 * A response body written page by page from an async generator of pages (the CSV export,
 * the calendar feed), pulled by the client: memory stays flat however many rows match.
 *
 * - The caller reads the first page before building the response, so that a failure
 *   there is still a proper JSON error rather than a broken download.
 * - A failure after the headers are sent aborts the transfer: a truncated file that looks
 *   complete would be worse (a CSV missing rows, a calendar missing events).
 * - When the client goes away, no further page is read; a query in flight finishes on its
 *   own (one page, bounded by the statement timeout) and its result is dropped.
 */
export interface PagedBody<Page> {
  first: IteratorResult<Page>;
  pages: AsyncGenerator<Page>;
  /** Written before the first page. */
  head: string;
  /** A page as text; '' when a page has nothing to show (then the next one is read). */
  render(page: Page): string;
  /** Written after the last page. */
  tail?: string;
  /** For the log line of a failure mid-stream ("export", "calendar feed"). */
  label: string;
  requestId: string;
}

export function pagedStream<Page>(body: PagedBody<Page>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let pending: IteratorResult<Page> | undefined = body.first;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (body.head) controller.enqueue(encoder.encode(body.head));
    },
    async pull(controller) {
      try {
        // A pull that enqueues nothing is not called again: read on until there is text.
        for (;;) {
          const page = pending ?? (await body.pages.next());
          pending = undefined;
          if (cancelled) return;
          if (page.done) {
            if (body.tail) controller.enqueue(encoder.encode(body.tail));
            controller.close();
            return;
          }
          const text = body.render(page.value);
          if (text) {
            controller.enqueue(encoder.encode(text));
            return;
          }
        }
      } catch (error) {
        if (cancelled) return;
        logger().error({ request_id: body.requestId, body: body.label, err: error }, 'streamed body failed mid-stream');
        controller.error(error);
      }
    },
    async cancel() {
      cancelled = true;
      await body.pages.return(undefined);
    },
  });
}
