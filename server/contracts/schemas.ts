import { z } from 'zod';
import { SORT_FIELDS } from '@/db/queries/contract-expressions';
import { CONTRACT_STATUSES } from '@/db/schema';

/**
 * The zod schemas of the contracts API: the single source of validation, of the output
 * shapes and of the OpenAPI document. Field names are snake_case on the wire.
 */

type Issue = { input?: unknown };
/** An error message that says when a parameter was given twice (the query then holds an array). */
const paramError = (name: string, expectation: string) => (issue: Issue) =>
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
function integerParam(name: string, bounds: { min: number; max?: number; default: number }) {
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
const timestampParam = (name: string) => {
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

export const SORT_VALUES = SORT_FIELDS.flatMap((f) => [f, `-${f}`] as const);
export type SortValue = (typeof SORT_VALUES)[number];
export const DEFAULT_SORT: SortValue = '-created_at';
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

/** Columns of the CSV export, in order. */
export const EXPORT_COLUMNS = [
  'id',
  'title',
  'status',
  'file_name',
  'file_size',
  'created_at',
  'updated_at',
  'organization_id',
  'expiration_date',
  'renewal_date',
  'auto_renewal',
  'contract_value',
  'currency',
  'provider',
  'client',
  'summary',
  'confidence_score',
] as const;
export type ExportColumn = (typeof EXPORT_COLUMNS)[number];
const EXPORT_COLUMN_NAMES = EXPORT_COLUMNS as unknown as [ExportColumn, ...ExportColumn[]];

// Inputs ---------------------------------------------------------------------------------

/** The filters of the list and the export, with their descriptions. */
const filterDescriptions = {
  status: 'Keep only contracts with this status.',
  organization_id: 'Keep only contracts of this organisation (you must be a member).',
  expiring_within_days:
    'Keep only contracts whose expiration date is between today and today + N days, both included (today in UTC).',
  renewing_within_days:
    'Keep only contracts whose renewal date is between today and today + N days, both included (today in UTC).',
  expires_before: 'Keep only contracts that expire before this date (the date itself excluded).',
  expires_after: 'Keep only contracts that expire after this date (the date itself excluded).',
  renews_before: 'Keep only contracts that renew before this date (the date itself excluded).',
  renews_after: 'Keep only contracts that renew after this date (the date itself excluded).',
  auto_renewal: 'Keep only contracts that renew automatically (true) or not (false); contracts where this is unknown match neither.',
  q: 'Case-insensitive text search in the title and in the parties (provider and client).',
  updated_since:
    'Keep only contracts updated at or after this instant, for incremental sync: pass the time of your previous sync, with sort=updated_at.',
};
const extractedNote = ' Date, auto-renewal and party filters read the extracted data, which exists only for completed contracts.';

export const listContractsInput = z.object({
  status: statusSchema.meta({ description: filterDescriptions.status }).optional(),
  organization_id: uuidParam('organization_id').meta({ description: filterDescriptions.organization_id }).optional(),
  expiring_within_days: optionalIntegerParam('expiring_within_days', { min: 0, max: MAX_WITHIN_DAYS }, filterDescriptions.expiring_within_days),
  renewing_within_days: optionalIntegerParam('renewing_within_days', { min: 0, max: MAX_WITHIN_DAYS }, filterDescriptions.renewing_within_days),
  expires_before: dateParam('expires_before').meta({ description: filterDescriptions.expires_before }).optional(),
  expires_after: dateParam('expires_after').meta({ description: filterDescriptions.expires_after }).optional(),
  renews_before: dateParam('renews_before').meta({ description: filterDescriptions.renews_before }).optional(),
  renews_after: dateParam('renews_after').meta({ description: filterDescriptions.renews_after }).optional(),
  auto_renewal: booleanParam('auto_renewal').meta({ description: filterDescriptions.auto_renewal }).optional(),
  q: searchParam('q').meta({ description: filterDescriptions.q + extractedNote }).optional(),
  updated_since: timestampParam('updated_since').meta({ description: filterDescriptions.updated_since }).optional(),
  sort: sortParam.optional(),
  limit: integerParam('limit', { min: 1, max: 100, default: 50 }).meta({ description: 'Results per page (1 to 100).' }),
  offset: integerParam('offset', { min: 0, default: 0 }).meta({ description: 'Number of results skipped.' }),
});
export type ListContractsInput = z.output<typeof listContractsInput>;

export const getContractInput = z.object({
  id: uuidParam('id').meta({ description: 'The contract id (UUID).' }),
});

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
      bom: bodyBoolean('bom')
        .optional()
        .meta({
          description:
            'true starts the file with a UTF-8 byte order mark, so that Excel opens it as UTF-8 (accents and other non-ASCII text intact). Default false.',
        }),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'The body must be a JSON object') },
  )
  .meta({
    id: 'ExportRequest',
    description: 'Optional filters (the list\'s, with JSON types), order and format; an empty body or {} exports everything.' + extractedNote,
  });
export type ExportContractsBody = z.output<typeof exportContractsBody>;
export const EXPORT_BODY_FIELDS = Object.keys(exportContractsBody.shape);

// Outputs --------------------------------------------------------------------------------

const timestamp = z.iso.datetime().meta({ description: 'ISO 8601 UTC timestamp', example: '2026-10-01T09:00:00.000Z' });
const isoDate = z.iso.date().meta({ description: 'Date, YYYY-MM-DD', example: '2027-03-31' });

export const contractSummary = z
  .object({
    id: z.guid(),
    title: z.string(),
    status: statusSchema,
    file_name: z.string().meta({ description: 'Name of the uploaded file.' }),
    file_size: z.int().meta({ description: 'Size of the uploaded file in bytes.' }),
    created_at: timestamp,
    updated_at: timestamp,
    organization_id: z.guid().nullable().meta({ description: 'null for a personal contract.' }),
  })
  .meta({ id: 'ContractSummary' });

export const extractedData = z
  .object({
    expiration_date: isoDate.nullable(),
    renewal_date: isoDate.nullable(),
    auto_renewal: z.boolean().nullable(),
    contract_value: z.number().nullable(),
    currency: z.string().length(3).nullable().meta({ description: 'ISO 4217 currency code.', example: 'EUR' }),
    parties: z.object({ provider: z.string().nullable(), client: z.string().nullable() }),
    summary: z.string().nullable(),
    confidence_score: z.number().min(0).max(1).nullable().meta({ description: 'Fraction between 0 and 1.' }),
  })
  .meta({
    id: 'ExtractedData',
    description: 'Data extracted from the file; each field is null when extraction did not find it.',
  });

export const contractDetail = contractSummary
  .extend({
    data: extractedData.nullable().meta({ description: 'null until the contract is completed.' }),
  })
  .meta({ id: 'ContractDetail' });

export const pagination = z
  .object({
    limit: z.int().meta({ description: 'The page size applied.' }),
    offset: z.int().meta({ description: 'The offset applied.' }),
    total: z.int().meta({ description: 'Number of contracts matching the filters.' }),
  })
  .meta({ id: 'Pagination' });

export const listContractsOutput = z.object({
  success: z.literal(true),
  data: z.object({ contracts: z.array(contractSummary), pagination }),
});

export const getContractOutput = z.object({
  success: z.literal(true),
  data: z.object({ contract: contractDetail }),
});

export const errorEnvelope = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.enum([
        'invalid_request',
        'unauthorized',
        'forbidden',
        'not_found',
        'method_not_allowed',
        'rate_limited',
        'internal_error',
        'service_unavailable',
      ]),
      message: z.string(),
      details: z.array(z.object({ param: z.string().optional(), message: z.string() })),
    }),
    request_id: z.string(),
  })
  .meta({ id: 'Error' });

