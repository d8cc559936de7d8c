import { z } from 'zod';
import { CONTRACT_STATUSES, SORT_VALUES } from '@/lib/contracts';
import { unknownParameterDetail } from '@/server/http/query';
import { DATE_FORMATS, EXPORT_FORMATS } from './csv';
import { EXPORT_COLUMNS } from './shape';

/**
 * The zod schemas of the contracts API's inputs (the list's query, get-one's path, the
 * export's body): the single source of their validation and of their part of the OpenAPI
 * document. The outputs are in ./shape.ts. Field names are snake_case on the wire.
 */

type Issue = { input?: unknown };
/** An error message that says when a parameter was given twice (the query then holds an array). */
export const paramError = (name: string, expectation: string) => (issue: Issue) =>
  Array.isArray(issue.input) ? `${name} must be given only once` : `${name} ${expectation}`;

/** An integer query parameter parsed strictly from its text: "1.5", "1e2", " 5" and "" are refused. */
function strictIntegerParam(name: string, bounds: { min: number; max?: number }) {
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  const expectation = `must be an integer between ${bounds.min} and ${max}`;
  return z
    .string({ error: paramError(name, expectation) })
    .regex(/^(0|[1-9][0-9]{0,15})$/, `${name} ${expectation}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(bounds.min, `${name} ${expectation}`)
        .max(max, `${name} ${expectation}`),
    );
}

const integerOverride = (bounds: { min: number; max?: number }) => ({
  type: 'integer' as const,
  minimum: bounds.min,
  maximum: bounds.max ?? Number.MAX_SAFE_INTEGER,
  pattern: undefined,
});

/** An integer query parameter with a default. */
export function integerParam(name: string, bounds: { min: number; max?: number; default: number }) {
  return strictIntegerParam(name, bounds)
    .optional()
    .transform((v) => v ?? bounds.default)
    .meta({ override: { ...integerOverride(bounds), default: bounds.default } });
}

/** An optional integer query parameter (absent: no filter). */
function optionalIntegerParam(name: string, bounds: { min: number; max: number }, description: string) {
  // The metadata sits on the inner schema: zod-openapi unwraps an optional parameter.
  return strictIntegerParam(name, bounds).meta({ description, override: integerOverride(bounds) }).optional();
}

// Lower-cased, because ids are compared as text with the caller's organisation ids.
const uuidParam = (name: string) =>
  z.guid({ error: paramError(name, 'must be a UUID (for example 3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c)') }).toLowerCase();

// Calendar dates as zod checks them (real days: 2027-02-29 does not exist), minus the
// year 0000, which Postgres cannot store. Instants: that date, a time, at most nine
// fractional digits and an offset within Postgres's ±15:59. The same patterns go into
// the document, so what it allows is exactly what the API takes.
const DATE_SOURCE = z.iso.date()._zod.def.pattern!.source.slice(1, -1);
const DATE_PATTERN = new RegExp(`^(?!0000-)${DATE_SOURCE}$`);
const TIMESTAMP_PATTERN = new RegExp(
  `^(?!0000-)${DATE_SOURCE}T(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,9})?(?:Z|[+-](?:0\\d|1[0-5]):[0-5]\\d)$`,
);

/** A calendar date, YYYY-MM-DD, that exists. */
const dateParam = (name: string) => {
  const message = `${name} must be a date YYYY-MM-DD (for example 2027-03-31)`;
  return z
    .string({ error: paramError(name, 'must be a date YYYY-MM-DD (for example 2027-03-31)') })
    .regex(DATE_PATTERN, message)
    .meta({ override: { type: 'string', format: 'date', pattern: DATE_PATTERN.source, example: '2027-03-31' } });
};

/**
 * An instant with its time zone, for incremental sync. Kept as the client wrote it:
 * Postgres reads it to the microsecond, with its offset.
 */
export const timestampParam = (name: string) => {
  const message = `${name} must be an ISO 8601 timestamp with a time zone (for example 2026-11-01T00:00:00Z)`;
  return z
    .string({ error: paramError(name, 'must be an ISO 8601 timestamp with a time zone (for example 2026-11-01T00:00:00Z)') })
    .regex(TIMESTAMP_PATTERN, message)
    .meta({ override: { type: 'string', format: 'date-time', pattern: TIMESTAMP_PATTERN.source, example: '2026-11-01T00:00:00Z' } });
};

/**
 * "true" or "false", in lower case like every other enumerated value of the API. A plain
 * boolean would turn the text "false" into true.
 */
const booleanParam = (name: string) =>
  z
    .stringbool({ truthy: ['true'], falsy: ['false'], case: 'sensitive', error: paramError(name, 'must be true or false') })
    .meta({ override: { type: 'string', enum: ['true', 'false'] } });

export const SEARCH_MAX_LENGTH = 200;
/** Free text; control characters are refused (they cannot occur in a title or a party's name). */
const searchParam = (name: string) =>
  z
    .string({ error: paramError(name, `must be text of 1 to ${SEARCH_MAX_LENGTH} characters`) })
    .min(1, `${name} must be text of 1 to ${SEARCH_MAX_LENGTH} characters`)
    .max(SEARCH_MAX_LENGTH, `${name} must be text of 1 to ${SEARCH_MAX_LENGTH} characters`)
    .regex(/^[^\u0000-\u001f\u007f]*$/, `${name} must not contain control characters`);

const sortSchema = (message: string) =>
  z.enum(SORT_VALUES, { error: message }).meta({
    description:
      'Order of the results: a field, ascending, or with a leading - descending. Ties are broken by id in the same direction, so pages are stable; contracts without a value (null) come last in both directions. Default -created_at.',
  });
const sortParam = sortSchema(`sort must be one of: ${SORT_VALUES.join(', ')}`);

export const MAX_WITHIN_DAYS = 3650;

export const statusSchema = z
  .enum(CONTRACT_STATUSES, { error: paramError('status', `must be one of: ${CONTRACT_STATUSES.join(', ')}`) })
  .meta({ description: 'Processing status of the contract.' });

const EXPORT_COLUMN_NAMES = EXPORT_COLUMNS as unknown as [(typeof EXPORT_COLUMNS)[number], ...(typeof EXPORT_COLUMNS)[number][]];

// Inputs ---------------------------------------------------------------------------------

/**
 * The query of an operation: its parameters, and a 400 for any other one, naming it (as
 * Stripe does: a typo such as `stauts=active` must not silently widen the query). Loose
 * rather than strict so that the refinement sees the unknown names, and words the error
 * as a query parameter with the allowed ones.
 */
export function querySchema<Shape extends z.ZodRawShape>(shape: Shape, pathParameters: readonly (keyof Shape & string)[] = []) {
  const allowed = Object.keys(shape).filter((name) => !pathParameters.includes(name));
  return z.looseObject(shape).superRefine((input, ctx) => {
    for (const name of Object.keys(input)) {
      if (name in shape) continue;
      const detail = unknownParameterDetail(name, allowed);
      ctx.addIssue({ code: 'custom', path: [detail.param!], message: detail.message });
    }
  });
}

/** The filters of the list and the export, with their descriptions. */
const filterDescriptions = {
  status: 'Keep only contracts with this status.',
  organization_id: 'Keep only contracts of this organisation (you must be a member).',
  expiring_within_days:
    'Keep only contracts whose expiration date is between today and today + N days, both included (today in UTC).',
  renewing_within_days:
    'Keep only contracts whose next renewal (`next_renewal_date`: an auto-renewing contract rolled forward by its term) is between today and today + N days, both included (today in UTC).',
  notice_within_days:
    'Keep only contracts whose notice deadline (`notice_deadline`: the last day notice stops the next renewal) is between today and today + N days, both included (today in UTC).',
  expires_before: 'Keep only contracts that expire before this date (the date itself excluded).',
  expires_after: 'Keep only contracts that expire after this date (the date itself excluded).',
  renews_before: 'Keep only contracts whose next renewal is before this date (the date itself excluded).',
  renews_after: 'Keep only contracts whose next renewal is after this date (the date itself excluded).',
  notice_before: 'Keep only contracts whose notice deadline is before this date (the date itself excluded).',
  notice_after: 'Keep only contracts whose notice deadline is after this date (the date itself excluded).',
  auto_renewal: 'Keep only contracts that renew automatically (true) or not (false); contracts where this is unknown match neither.',
  q: 'Case-insensitive text search in the title and in the parties (provider and client).',
  updated_since:
    'Keep only contracts updated at or after this instant, for incremental sync: pass the time of your previous sync, with sort=updated_at.',
};
const extractedNote = ' Date, auto-renewal and party filters read the extracted data, which exists only for completed contracts.';

const CURSOR_PATTERN = /^[A-Za-z0-9_-]{1,2000}$/;
export const cursorParam = z
  .string({ error: paramError('cursor', 'must be the pagination.next_cursor of a previous page') })
  .regex(CURSOR_PATTERN, 'cursor must be the pagination.next_cursor of a previous page, as it was returned')
  .meta({
    description:
      'Continue after the previous page: pass its `pagination.next_cursor` (opaque) with the same filters and sort. Every page then costs the same however deep. Not together with a non-zero `offset`.',
  });

export const listContractsInput = querySchema({
  status: statusSchema.meta({ description: filterDescriptions.status }).optional(),
  organization_id: uuidParam('organization_id').meta({ description: filterDescriptions.organization_id }).optional(),
  expiring_within_days: optionalIntegerParam('expiring_within_days', { min: 0, max: MAX_WITHIN_DAYS }, filterDescriptions.expiring_within_days),
  renewing_within_days: optionalIntegerParam('renewing_within_days', { min: 0, max: MAX_WITHIN_DAYS }, filterDescriptions.renewing_within_days),
  expires_before: dateParam('expires_before').meta({ description: filterDescriptions.expires_before }).optional(),
  expires_after: dateParam('expires_after').meta({ description: filterDescriptions.expires_after }).optional(),
  renews_before: dateParam('renews_before').meta({ description: filterDescriptions.renews_before }).optional(),
  renews_after: dateParam('renews_after').meta({ description: filterDescriptions.renews_after }).optional(),
  notice_within_days: optionalIntegerParam('notice_within_days', { min: 0, max: MAX_WITHIN_DAYS }, filterDescriptions.notice_within_days),
  notice_before: dateParam('notice_before').meta({ description: filterDescriptions.notice_before }).optional(),
  notice_after: dateParam('notice_after').meta({ description: filterDescriptions.notice_after }).optional(),
  auto_renewal: booleanParam('auto_renewal').meta({ description: filterDescriptions.auto_renewal }).optional(),
  q: searchParam('q').meta({ description: filterDescriptions.q + extractedNote }).optional(),
  updated_since: timestampParam('updated_since').meta({ description: filterDescriptions.updated_since }).optional(),
  sort: sortParam.optional(),
  limit: integerParam('limit', { min: 1, max: 100, default: 50 }).meta({ description: 'Results per page (1 to 100).' }),
  offset: integerParam('offset', { min: 0, default: 0 }).meta({ description: 'Number of results skipped.' }),
  cursor: cursorParam.optional(),
  }).superRefine((input, ctx) => {
    if (input.cursor !== undefined && input.offset !== 0) {
      ctx.addIssue({ code: 'custom', path: ['cursor'], message: 'cursor and offset are two ways to page: with a cursor, leave offset out (or 0)' });
    }
  });
export type ListContractsInput = z.output<typeof listContractsInput>;

export const getContractInput = querySchema(
  {
    id: uuidParam('id').meta({ description: 'The contract id (UUID).' }),
  },
  ['id'],
);

/** An integer field of a JSON body. */
const bodyInteger = (name: string, bounds: { min: number; max: number }) =>
  z.int({ error: `${name} must be an integer between ${bounds.min} and ${bounds.max}` })
    .min(bounds.min, `${name} must be an integer between ${bounds.min} and ${bounds.max}`)
    .max(bounds.max, `${name} must be an integer between ${bounds.min} and ${bounds.max}`);
const bodyBoolean = (name: string) => z.boolean({ error: `${name} must be true or false (a JSON boolean)` });

export const exportContractsBody = z
  .strictObject(
    {
      status: statusSchema.optional().meta({ description: filterDescriptions.status }),
      organization_id: z
        .guid({ error: 'organization_id must be a UUID' })
        .toLowerCase()
        .optional()
        .meta({ description: filterDescriptions.organization_id }),
      expiring_within_days: bodyInteger('expiring_within_days', { min: 0, max: MAX_WITHIN_DAYS })
        .optional()
        .meta({ description: filterDescriptions.expiring_within_days }),
      renewing_within_days: bodyInteger('renewing_within_days', { min: 0, max: MAX_WITHIN_DAYS })
        .optional()
        .meta({ description: filterDescriptions.renewing_within_days }),
      expires_before: dateParam('expires_before').optional().meta({ description: filterDescriptions.expires_before }),
      expires_after: dateParam('expires_after').optional().meta({ description: filterDescriptions.expires_after }),
      renews_before: dateParam('renews_before').optional().meta({ description: filterDescriptions.renews_before }),
      renews_after: dateParam('renews_after').optional().meta({ description: filterDescriptions.renews_after }),
      notice_within_days: bodyInteger('notice_within_days', { min: 0, max: MAX_WITHIN_DAYS })
        .optional()
        .meta({ description: filterDescriptions.notice_within_days }),
      notice_before: dateParam('notice_before').optional().meta({ description: filterDescriptions.notice_before }),
      notice_after: dateParam('notice_after').optional().meta({ description: filterDescriptions.notice_after }),
      auto_renewal: bodyBoolean('auto_renewal').optional().meta({ description: filterDescriptions.auto_renewal }),
      q: searchParam('q').optional().meta({ description: filterDescriptions.q }),
      updated_since: timestampParam('updated_since').optional().meta({ description: filterDescriptions.updated_since }),
      sort: sortSchema(`sort must be one of: ${SORT_VALUES.join(', ')}`).optional(),
      columns: z
        .array(z.enum(EXPORT_COLUMN_NAMES, { error: `each column must be one of: ${EXPORT_COLUMN_NAMES.join(', ')}` }), {
          error: 'columns must be an array of column names',
        })
        .min(1, 'columns must name at least one column')
        .refine((list) => new Set(list).size === list.length, 'columns must not name a column twice')
        .meta({
          description: 'The columns to export, in this order (default: every column, in the documented order).',
          override: { uniqueItems: true },
        })
        .optional(),
      date_format: z
        .enum(DATE_FORMATS, { error: `date_format must be one of: ${DATE_FORMATS.join(', ')}` })
        .optional()
        .meta({
          description:
            'How created_at and updated_at are written. iso (default): 2026-09-29T10:00:00.000Z, as in the JSON API. excel: 2026-09-29 10:00:00 (UTC), which Excel reads as a date and time in every locale (it leaves the iso form as text); Python\'s datetime.fromisoformat reads both. Dates are YYYY-MM-DD either way.',
        }),
      format: z
        .enum(EXPORT_FORMATS, { error: `format must be one of: ${EXPORT_FORMATS.join(', ')}` })
        .optional()
        .meta({
          description:
            'csv (default): RFC 4180 CSV, the detail flattened to columns. ndjson: one JSON object per line (application/x-ndjson), each exactly the `contract` of GET /api/v1/contracts/{id} (types, nulls and text as they are, no formula guard): what a program keeping a copy reads back without loss. `columns`, `date_format` and `bom` are CSV\'s and refused with ndjson.',
        }),
      bom: bodyBoolean('bom')
        .optional()
        .meta({
          description:
            'true starts the file with a UTF-8 byte order mark, so that Excel opens it as UTF-8 (accents and other non-ASCII text intact). Default false.',
        }),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'The body must be a JSON object') },
  )
  .superRefine((body, ctx) => {
    if (body.format !== 'ndjson') return;
    const csvOnly = (['columns', 'date_format', 'bom'] as const).find((field) => body[field] !== undefined);
    if (csvOnly) {
      ctx.addIssue({
        code: 'custom',
        path: [csvOnly],
        message: `${csvOnly} applies to the CSV format only: leave it out with "format": "ndjson", whose lines are the contract's detail whole.`,
      });
    }
  })
  .meta({
    id: 'ExportRequest',
    description: 'Optional filters (the list\'s, with JSON types), order and format; an empty body or {} exports everything.' + extractedNote,
  });
export type ExportContractsBody = z.output<typeof exportContractsBody>;
export const EXPORT_BODY_FIELDS = Object.keys(exportContractsBody.shape);

