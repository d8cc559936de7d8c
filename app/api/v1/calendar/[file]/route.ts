import { handleCalendarFeedRequest } from '@/server/calendar/feed-handler';
import { withRequestDeadline } from '@/server/rest/deadline';
import { headOf } from '@/server/rest/head';

export const dynamic = 'force-dynamic';

// Every answer starts within REQUEST_DEADLINE_MS, a 503 otherwise (server/rest/deadline.ts);
// the streamed rest of the calendar is paced by the client.
const handle = withRequestDeadline(handleCalendarFeedRequest);

// Every method is routed to the handler so that anything but GET gets the API's JSON 405.
export const GET = handle;
export const HEAD = headOf(handle);
export const POST = handle;
export const PUT = handle;
export const PATCH = handle;
export const DELETE = handle;
export const OPTIONS = handle;
