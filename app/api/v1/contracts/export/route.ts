import { withRequestDeadline } from '@/server/rest/deadline';
import { handleExportRequest } from '@/server/rest/export-handler';

export const dynamic = 'force-dynamic';

// The deadline covers the wait for the first page; the streamed rest is paced by the client.
const handle = withRequestDeadline(handleExportRequest);

// Every method is routed to the handler so that anything but POST gets the API's JSON 405.
export const POST = handle;
export const GET = handle;
export const PUT = handle;
export const PATCH = handle;
export const DELETE = handle;
export const OPTIONS = handle;
