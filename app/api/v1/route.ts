import { withRequestDeadline } from '@/server/rest/deadline';
import { handleRestRequest } from '@/server/rest/openapi-handler';

// /api/v1 itself is not an endpoint: answered like any unknown path, as JSON.
export const dynamic = 'force-dynamic';
const handle = withRequestDeadline(handleRestRequest);
export const GET = handle;
export const POST = handle;
export const PUT = handle;
export const PATCH = handle;
export const DELETE = handle;
