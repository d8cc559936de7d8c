import { z } from 'zod';
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
function integerParam(name: string, bounds: { min: number; max?: number; default: number }) {
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
    )
    .optional()
    .transform((v) => v ?? bounds.default)
    .meta({
      override: {
        type: 'integer',
        minimum: bounds.min,
        maximum: max,
        default: bounds.default,
        pattern: undefined,
      },
    });
}

// Lower-cased, because ids are compared as text with the caller's organisation ids.
const uuidParam = (name: string) =>
  z.guid({ error: paramError(name, 'must be a UUID (for example 3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c)') }).toLowerCase();

export const statusSchema = z
  .enum(CONTRACT_STATUSES, { error: paramError('status', `must be one of: ${CONTRACT_STATUSES.join(', ')}`) })
  .meta({ description: 'Processing status of the contract.' });

// Inputs ---------------------------------------------------------------------------------

export const listContractsInput = z.object({
  status: statusSchema.optional().meta({ description: 'Keep only contracts with this status.' }),
  organization_id: uuidParam('organization_id')
    .optional()
    .meta({ description: 'Keep only contracts of this organisation (you must be a member).' }),
  limit: integerParam('limit', { min: 1, max: 100, default: 50 }).meta({ description: 'Results per page (1 to 100).' }),
  offset: integerParam('offset', { min: 0, default: 0 }).meta({ description: 'Number of results skipped.' }),
});

export const getContractInput = z.object({
  id: uuidParam('id').meta({ description: 'The contract id (UUID).' }),
});

export const exportContractsBody = z
  .strictObject(
    {
      status: statusSchema.optional().meta({ description: 'Keep only contracts with this status.' }),
      organization_id: z
        .guid({ error: 'organization_id must be a UUID' })
        .toLowerCase()
        .optional()
        .meta({ description: 'Keep only contracts of this organisation (you must be a member).' }),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'The body must be a JSON object') },
  )
  .meta({ id: 'ExportRequest', description: 'Optional filters; an empty body or {} exports everything.' });
export type ExportContractsBody = z.output<typeof exportContractsBody>;

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
