import { handleExportRequest } from '@/server/rest/export-handler';

export const dynamic = 'force-dynamic';

export const POST = handleExportRequest;
export const GET = handleExportRequest;
export const PUT = handleExportRequest;
export const PATCH = handleExportRequest;
export const DELETE = handleExportRequest;
