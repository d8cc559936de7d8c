import { handleExportRequest } from '@/server/rest/export-handler';

export const dynamic = 'force-dynamic';

// Every method is routed to the handler so that anything but POST gets the API's JSON 405.
export const POST = handleExportRequest;
export const GET = handleExportRequest;
export const PUT = handleExportRequest;
export const PATCH = handleExportRequest;
export const DELETE = handleExportRequest;
export const OPTIONS = handleExportRequest;
