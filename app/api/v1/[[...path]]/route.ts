import { handleApiRequest } from '@/server/rest/router';

// Every path and method below /api/v1 reaches the API's router, so that unknown paths and
// methods get the API's JSON 404 and 405 (server/rest/router.ts).
export const dynamic = 'force-dynamic';
export const GET = handleApiRequest;
export const HEAD = handleApiRequest;
export const POST = handleApiRequest;
export const PUT = handleApiRequest;
export const PATCH = handleApiRequest;
export const DELETE = handleApiRequest;
export const OPTIONS = handleApiRequest;
