import { handleRestRequest } from '@/server/rest/openapi-handler';

// /api/v1 itself is not an endpoint: answered like any unknown path, as JSON.
export const dynamic = 'force-dynamic';
export const GET = handleRestRequest;
export const POST = handleRestRequest;
export const PUT = handleRestRequest;
export const PATCH = handleRestRequest;
export const DELETE = handleRestRequest;
