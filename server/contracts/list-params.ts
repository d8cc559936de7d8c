import { DEFAULT_PAGE_SIZE, LIST_PARAMS, type ListParam, type ParamError, type ParamValues, type SearchParams } from '@/lib/contract-list-url';
import { assertMemberOf, type CallerScope } from '@/server/access/scope';
import { AppError } from '@/server/errors';
import { listContractsInput, type ListContractsInput } from './schemas';

/**
 * The contracts page's URL state. The page takes the API's own query parameters and
 * validates them with the API's schema, so that a URL of the page and a request to
 * GET /api/v1/contracts with the same query mean the same list. A parameter the API would
 * refuse is reported with the API's message and left out; the rest still apply.
 */

export interface ListParams {
  /** The validated input, as the API's procedure receives it. */
  input: ListContractsInput;
  /** The accepted parameters as given, for links that keep the list's state. */
  applied: ParamValues;
  /** The refused parameters, with the API's messages. */
  errors: ParamError[];
  /** What was typed for a refused parameter. */
  refused: ParamValues;
  /**
   * What the filter form shows: the accepted parameters, and the refused free text (a
   * search or a timestamp) so that it can be corrected; a refused choice has no option to show.
   */
  formValues: ParamValues;
}

/**
 * An empty value is no filter: a GET form sends every field, "Any" ones empty. Several
 * non-empty values stay an array, which the schema refuses as the API does ("given only
 * once").
 */
function rawValue(value: string | string[] | undefined): string | string[] | undefined {
  const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => v !== undefined && v !== '');
  if (values.length === 0) return undefined;
  return values.length === 1 ? values[0] : values;
}

export function parseListParams(searchParams: SearchParams, scope: CallerScope): ListParams {
  const candidate: Partial<Record<ListParam, string | string[]>> = {};
  for (const name of LIST_PARAMS) {
    const value = rawValue(searchParams[name]);
    if (value !== undefined) candidate[name] = value;
  }
  const errors: ParamError[] = [];
  const refused: ParamValues = {};
  const refuse = (param: ListParam, message: string) => {
    errors.push({ param, message });
    const value = candidate[param];
    refused[param] = Array.isArray(value) ? value.join(', ') : value;
    delete candidate[param];
  };
  // The page's own default page size; an explicit limit (1 to 100) is the API's.
  const withDefaults = () => ({ limit: String(DEFAULT_PAGE_SIZE), ...candidate });

  // Each round drops the parameters the schema refused; parameters are independent of
  // each other, so the second round succeeds.
  let parsed = listContractsInput.safeParse(withDefaults());
  while (!parsed.success) {
    const issues = parsed.error.issues;
    const params = issues.map((issue) => issue.path[0]).filter((p): p is ListParam => LIST_PARAMS.includes(p as ListParam));
    if (params.length === 0 || params.some((p) => candidate[p] === undefined)) {
      throw new Error(`unexpected validation issue: ${JSON.stringify(issues)}`);
    }
    for (const issue of issues) {
      const param = issue.path[0] as ListParam;
      if (candidate[param] !== undefined) refuse(param, issue.message);
    }
    parsed = listContractsInput.safeParse(withDefaults());
  }
  const input = parsed.data;

  // An organisation the caller is not in: the API's 403 message, and no organisation filter.
  if (input.organization_id !== undefined) {
    try {
      assertMemberOf(scope, input.organization_id);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      refuse('organization_id', error.details[0]?.message ?? error.message);
      input.organization_id = undefined;
    }
  }

  const applied: ParamValues = {};
  for (const name of LIST_PARAMS) {
    const value = candidate[name];
    if (typeof value === 'string') applied[name] = name === 'organization_id' ? input.organization_id : value;
  }
  const formValues: ParamValues = { ...applied };
  for (const name of ['q', 'updated_since'] as const) if (refused[name] !== undefined) formValues[name] = refused[name];
  return { input, applied, errors, refused, formValues };
}
