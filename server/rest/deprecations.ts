import 'server-only';

/**
 * What in /api/v1 is deprecated: the one place to mark it (docs/api-changes.md,
 * "Deprecating something"). An entry here puts, with nothing else to write:
 *
 * - `deprecated: true` on the parameter or the schema property in the OpenAPI document,
 *   with a note in the operation's description, and the `Deprecation`, `Sunset` and
 *   `Link` headers declared on the affected answers (./openapi-deprecations.ts);
 * - those headers on the answers themselves (./deprecation-headers.ts, from the router
 *   and the export): for a parameter, on the answers to requests that sent it; for a
 *   field, on every answer of the operations whose answers contain it;
 * - the policy check (./deprecation-policy.ts, run by `npm run openapi:breaking` and
 *   tests/docs/deprecations.test.ts): a `deprecated` changelog entry of the same day under
 *   the anchor named here, and a sunset at least 12 months after the announcement.
 *
 * Data only, so that a test can replace the list (vi.mock of this module) and every
 * reader sees the same entries.
 */

interface DeprecationDates {
  /** The day it was announced (the changelog entry's date), YYYY-MM-DD. */
  announced: string;
  /** The first day it may be gone, YYYY-MM-DD: at least 12 months after `announced`. */
  sunset: string;
  /** The anchor of the `deprecated` entry in server/rest/changelog.ts. */
  changelog: string;
  /** What to use instead, in Markdown (shown in the document). */
  replacement?: string;
}

export type Deprecation =
  /** A query parameter of an operation, or a field of its JSON request body (the export's). */
  | (DeprecationDates & { kind: 'parameter'; /** operationId, e.g. listContracts */ operation: string; name: string })
  /**
   * A property of a schema of the document's components (e.g. ContractSummary's
   * file_size). Schemas are shared, so the operations it concerns are found in the document:
   * every operation whose answers reference the schema.
   */
  | (DeprecationDates & { kind: 'field'; schema: string; name: string });

/** Nothing is deprecated yet. */
export const DEPRECATIONS: readonly Deprecation[] = [];
