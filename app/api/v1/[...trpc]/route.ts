import { withRequestDeadline } from '@/server/rest/deadline';
import { headOf } from '@/server/rest/head';
import { handleRestRequest } from '@/server/rest/openapi-handler';

export const dynamic = 'force-dynamic';

// Every answer within REQUEST_DEADLINE_MS, a 503 otherwise (server/rest/deadline.ts).
const handle = withRequestDeadline(handleRestRequest);

export const GET = handle;
export const HEAD = headOf(handle);
export const POST = handle;
export const PUT = handle;
export const PATCH = handle;
export const DELETE = handle;
export const OPTIONS = handle;
