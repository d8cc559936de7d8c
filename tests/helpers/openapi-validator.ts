import OpenAPIBackend, { type Document } from 'openapi-backend';
import { expect } from 'vitest';
import { errorEnvelopeSchema } from '@/server/errors';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json?: unknown;
}

/**
 * Checks responses against the served OpenAPI document: the status must be documented
 * for the operation, and the body and headers must match its schemas. Responses for
 * paths outside the document (unknown paths, wrong methods) must still be the documented
 * error envelope.
 */
/** `path` is relative to /api/v1, like the document's paths. */
export async function createResponseValidator(document: Record<string, unknown>) {
  // quick: openapi-backend's own document check only knows OpenAPI 3.0 keywords (it refuses
  // `const`); the document's validity is checked by `redocly lint` in CI instead.
  const api = new OpenAPIBackend({ definition: document as unknown as Document, quick: true, validate: true });
  await api.init();

  return function validate(method: string, path: string, response: ApiResponse): void {
    const operation = api.matchOperation({ method, path, headers: {}, query: {} });
    if (!operation || response.status === 405) {
      expect(response.status, `${method} ${path} is not in the document`).toBeGreaterThanOrEqual(400);
      if (method !== 'HEAD') expect(errorEnvelopeSchema.safeParse(response.json).success, response.text).toBe(true);
      return;
    }
    const documented = Object.keys(operation.responses ?? {});
    expect(documented, `status ${response.status} of ${operation.operationId} is not documented`).toContain(
      String(response.status),
    );
    if (response.json !== undefined) {
      const result = api.validator.validateResponse(response.json, operation, response.status);
      expect(result.errors ?? [], `${operation.operationId} ${response.status} body: ${response.text.slice(0, 300)}`).toEqual([]);
    }
    const headers = Object.fromEntries(response.headers.entries());
    const documentedResponse = operation.responses?.[String(response.status)] as { headers?: Record<string, { required?: boolean }>; content?: Record<string, unknown> } | undefined;
    // No body where the document shows none (304, HEAD); JSON where it shows JSON.
    if (!documentedResponse?.content) expect(response.text, `${operation.operationId} ${response.status} has no body`).toBe('');
    // Every header documented as required must be there; those present must match their schema.
    const documentedHeaders = documentedResponse?.headers ?? {};
    const missing = Object.entries(documentedHeaders)
      .filter(([name, header]) => header.required === true && !(name.toLowerCase() in headers))
      .map(([name]) => name);
    expect(missing, `${operation.operationId} ${response.status}: documented headers missing`).toEqual([]);
    const headerResult = api.validator.validateResponseHeaders(headers, operation, {
      statusCode: response.status,
      setMatchType: 'any' as never,
    });
    expect(headerResult.errors ?? [], `${operation.operationId} ${response.status} headers`).toEqual([]);
  };
}
