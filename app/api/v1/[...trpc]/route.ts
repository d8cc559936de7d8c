import { headOf } from '@/server/rest/head';
import { handleRestRequest } from '@/server/rest/openapi-handler';

export const dynamic = 'force-dynamic';

export const GET = handleRestRequest;
export const HEAD = headOf(handleRestRequest);
export const POST = handleRestRequest;
export const PUT = handleRestRequest;
export const PATCH = handleRestRequest;
export const DELETE = handleRestRequest;
export const OPTIONS = handleRestRequest;
