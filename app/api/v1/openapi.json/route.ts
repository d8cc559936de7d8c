import { handleOpenApiDocumentRequest } from '@/server/rest/document-handler';

export const dynamic = 'force-dynamic';

// Every method is routed to the handler so that anything but GET gets the API's JSON 405.
export const GET = handleOpenApiDocumentRequest;
export const HEAD = handleOpenApiDocumentRequest;
export const POST = handleOpenApiDocumentRequest;
export const PUT = handleOpenApiDocumentRequest;
export const PATCH = handleOpenApiDocumentRequest;
export const DELETE = handleOpenApiDocumentRequest;
export const OPTIONS = handleOpenApiDocumentRequest;
