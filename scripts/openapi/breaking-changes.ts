import type { Json } from './contract';

/**
 * The breaking changes between two OpenAPI 3.1 documents (or their contracts, ./contract.ts):
 * what a client written against `base` would notice in `head`. docs/api-changes.md lists
 * the rules; this is them, written once. `$ref`s are followed in each document's own
 * components, so a change inside a shared schema is reported where it is used.
 *
 * Two directions, because the same change breaks one and not the other:
 * - what the API **accepts** (parameters, request bodies; and what a webhook receiver may
 *   answer): breaking when it accepts less (a value, a type, a field, a range, a pattern);
 * - what the API **answers** (responses, their headers; and the webhook payloads it
 *   sends): breaking when a field or header goes or may be absent, or a value may be of a
 *   new type (null included). New fields and new enumeration values are not breaking:
 *   clients must ignore what they do not know.
 *
 * Not breaking, and so not reported: new operations, webhooks, optional parameters, fields,
 * statuses and enumeration values; anything in prose (descriptions, examples); a
 * deprecation mark. Not visible to any document diff: a change of behaviour under an
 * unchanged schema (say, another error code for the same condition): review catches that.
 */

export interface BreakingChange {
  /** Where: "GET /contracts", "GET /contracts 200 application/json", "webhook contract.created"… */
  at: string;
  message: string;
}

type Direction = 'accepts' | 'answers';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

class Comparison {
  readonly changes: BreakingChange[] = [];
  /** Pairs of schema references already compared in a direction (schemas may be recursive). */
  private readonly compared = new Set<string>();

  constructor(
    private readonly base: Json,
    private readonly head: Json,
  ) {}

  report(at: string, message: string): void {
    // A body's own schema is reported at its media type ("… application/json →" ends a location that fields continue).
    this.changes.push({ at: at.replace(/ →$/, ''), message });
  }

  /** A node with its $ref followed (JSON pointers into the same document), and the name of the last component. */
  resolve(doc: Json, node: unknown): { node: Json | undefined; ref?: string } {
    let current = node as Json | undefined;
    let ref: string | undefined;
    for (let hops = 0; current && typeof current.$ref === 'string' && hops < 32; hops++) {
      ref = current.$ref;
      if (!ref.startsWith('#/')) return { node: undefined, ref };
      current = ref
        .slice(2)
        .split('/')
        .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<unknown>((at, part) => (at && typeof at === 'object' ? (at as Json)[part] : undefined), doc) as Json | undefined;
    }
    return { node: current, ref };
  }

  // Documents ---------------------------------------------------------------------------

  run(): BreakingChange[] {
    this.paths();
    this.webhooks();
    this.securitySchemes();
    this.componentNames();
    this.errorCodes();
    return this.changes;
  }

  /** Paths by their template with parameter names left out: /contracts/{id} and /contracts/{contractId} are one URL. */
  private pathsOf(doc: Json): Map<string, { path: string; item: Json }> {
    const out = new Map<string, { path: string; item: Json }>();
    for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) out.set(path.replace(/\{[^}]*\}/g, '{}'), { path, item });
    return out;
  }

  private paths(): void {
    const headPaths = this.pathsOf(this.head);
    for (const [key, { path, item }] of this.pathsOf(this.base)) {
      const headItem = headPaths.get(key)?.item;
      for (const method of METHODS) {
        const operation = item[method] as Json | undefined;
        if (!operation) continue;
        const at = `${method.toUpperCase()} ${path}`;
        const headOperation = headItem?.[method] as Json | undefined;
        if (!headOperation) {
          this.report(at, 'operation removed');
          continue;
        }
        this.operation(at, { ...operation, parameters: [...((item.parameters as Json[]) ?? []), ...((operation.parameters as Json[]) ?? [])] }, {
          ...headOperation,
          parameters: [...((headItem!.parameters as Json[]) ?? []), ...((headOperation.parameters as Json[]) ?? [])],
        });
      }
    }
  }

  private operation(at: string, base: Json, head: Json): void {
    if (base.operationId !== undefined && base.operationId !== head.operationId) {
      this.report(at, `operationId changed from ${String(base.operationId)} to ${String(head.operationId ?? '(none)')} (generated clients name their methods after it)`);
    }
    this.parameters(at, base.parameters as Json[], head.parameters as Json[], 'accepts');
    this.requestBody(at, base.requestBody, head.requestBody);
    this.responses(at, base.responses as Json | undefined, head.responses as Json | undefined, 'answers');
    this.security(at, (base.security ?? this.base.security ?? []) as Json[], (head.security ?? this.head.security ?? []) as Json[]);
  }

  private webhooks(): void {
    const headHooks = (this.head.webhooks ?? {}) as Record<string, Json>;
    for (const [name, item] of Object.entries((this.base.webhooks ?? {}) as Record<string, Json>)) {
      for (const method of METHODS) {
        const operation = item[method] as Json | undefined;
        if (!operation) continue;
        const at = `webhook ${name}`;
        const headOperation = headHooks[name]?.[method] as Json | undefined;
        if (!headOperation) {
          this.report(at, 'event removed: receivers subscribed to it get nothing');
          continue;
        }
        // The other way round: the service sends the request and accepts the receiver's answers.
        this.parameters(at, (operation.parameters ?? []) as Json[], (headOperation.parameters ?? []) as Json[], 'answers');
        const body = this.resolve(this.base, operation.requestBody).node;
        const headBody = this.resolve(this.head, headOperation.requestBody).node;
        this.content(`${at} payload`, body?.content as Json | undefined, headBody?.content as Json | undefined, 'answers');
        this.responses(at, operation.responses as Json | undefined, headOperation.responses as Json | undefined, 'accepts');
      }
    }
  }

  // Parts of an operation -------------------------------------------------------------------

  private parameters(at: string, base: Json[], head: Json[], direction: Direction): void {
    const key = (p: Json) => `${String(p.in)}:${p.in === 'header' ? String(p.name).toLowerCase() : String(p.name)}`;
    const resolved = (doc: Json, list: Json[]) => new Map(list.map((p) => this.resolve(doc, p).node ?? {}).map((p) => [key(p), p]));
    const before = resolved(this.base, base);
    const after = resolved(this.head, head);
    for (const [name, parameter] of before) {
      const what = `${String(parameter.in)} parameter \`${String(parameter.name)}\``;
      const next = after.get(name);
      if (!next) {
        this.report(at, direction === 'accepts' ? `${what} removed (or renamed): requests that send it are refused` : `${what} no longer sent`);
        continue;
      }
      if (direction === 'accepts' && !parameter.required && next.required) this.report(at, `${what} is now required`);
      if (direction === 'answers' && parameter.required && !next.required) this.report(at, `${what} may now be absent`);
      this.schema(`${at}: ${what}`, parameter.schema, next.schema, direction);
    }
    if (direction === 'accepts') {
      for (const [name, parameter] of after) {
        if (!before.has(name) && parameter.required) this.report(at, `new required ${String(parameter.in)} parameter \`${String(parameter.name)}\``);
      }
    }
  }

  private requestBody(at: string, baseBody: unknown, headBody: unknown): void {
    const base = this.resolve(this.base, baseBody).node;
    const head = this.resolve(this.head, headBody).node;
    if (!base) {
      if (head?.required) this.report(at, 'a request body is now required');
      return;
    }
    if (!head) {
      this.report(at, 'request body removed: what it carried is no longer read');
      return;
    }
    if (!base.required && head.required) this.report(at, 'the request body is now required');
    this.content(`${at} request body`, base.content as Json | undefined, head.content as Json | undefined, 'accepts');
  }

  private content(at: string, base: Json | undefined, head: Json | undefined, direction: Direction): void {
    for (const [type, media] of Object.entries(base ?? {})) {
      const next = (head ?? {})[type] as Json | undefined;
      if (!next) {
        this.report(at, direction === 'accepts' ? `media type ${type} no longer accepted` : `media type ${type} no longer answered`);
        continue;
      }
      this.schema(`${at} ${type} →`, (media as Json).schema, next.schema, direction);
    }
  }

  private responses(at: string, base: Json | undefined, head: Json | undefined, direction: Direction): void {
    for (const [status, baseResponse] of Object.entries(base ?? {})) {
      const where = `${at} ${status}`;
      const next = this.resolve(this.head, (head ?? {})[status]).node;
      if (!next) {
        this.report(where, direction === 'answers' ? `response ${status} removed` : `a ${status} answer from the receiver is no longer accepted`);
        continue;
      }
      const response = this.resolve(this.base, baseResponse).node ?? {};
      const headHeaders = new Map(Object.entries((next.headers ?? {}) as Json).map(([name, h]) => [name.toLowerCase(), h]));
      for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
        const before = this.resolve(this.base, header).node ?? {};
        const after = this.resolve(this.head, headHeaders.get(name.toLowerCase())).node;
        if (!after) {
          this.report(where, `header ${name} removed`);
          continue;
        }
        if (before.required && !after.required) this.report(where, `header ${name} may now be absent`);
        this.schema(`${where}: header ${name}`, before.schema, after.schema, direction);
      }
      this.content(where, response.content as Json | undefined, next.content as Json | undefined, direction);
    }
  }

  /** Breaking when a caller that satisfied one of the old requirements satisfies none of the new. */
  private security(at: string, base: Json[], head: Json[]): void {
    const anonymousBefore = base.length === 0 || base.some((r) => Object.keys(r).length === 0);
    for (const requirement of anonymousBefore ? [{}] : base) {
      const satisfied = head.length === 0 || head.some((alt) =>
        Object.entries(alt).every(([scheme, scopes]) => {
          const had = (requirement as Json)[scheme] as string[] | undefined;
          return had !== undefined && (scopes as string[]).every((s) => had.includes(s));
        }),
      );
      if (!satisfied) {
        const what = Object.keys(requirement).length === 0 ? 'no credentials' : Object.entries(requirement).map(([s, scopes]) => `${s}${(scopes as string[]).length ? ` [${(scopes as string[]).join(', ')}]` : ''}`).join(' + ');
        this.report(at, `security: a request authorised by ${what} is no longer`);
      }
    }
  }

  private securitySchemes(): void {
    const schemes = (doc: Json) => (((doc.components as Json | undefined)?.securitySchemes ?? {}) as Record<string, Json>);
    const after = schemes(this.head);
    for (const [name, scheme] of Object.entries(schemes(this.base))) {
      const next = after[name];
      if (!next) this.report('components', `security scheme ${name} removed`);
      else {
        for (const field of ['type', 'in', 'name', 'scheme']) {
          if (scheme[field] !== next[field]) this.report('components', `security scheme ${name}: ${field} changed from ${String(scheme[field])} to ${String(next[field])}`);
        }
      }
    }
  }

  /** Generated clients export the component schemas by name (ContractList, Error…). */
  private componentNames(): void {
    const names = (doc: Json) => Object.keys(((doc.components as Json | undefined)?.schemas ?? {}) as Json);
    const after = new Set(names(this.head));
    for (const name of names(this.base)) if (!after.has(name)) this.report('components', `schema ${name} removed or renamed (generated clients name their types after it)`);
  }

  /**
   * The one enumeration of answers that may not lose values: an error code gone means its
   * condition now answers another code, which clients branch on (docs/api-changes.md).
   */
  private errorCodes(): void {
    const codes = (doc: Json) => ((((doc.components as Json | undefined)?.schemas as Json | undefined)?.ErrorCode as Json | undefined)?.enum ?? []) as unknown[];
    const after = codes(this.head);
    for (const code of codes(this.base)) if (!after.includes(code)) this.report('components', `error code ${String(code)} removed: its condition would answer another code`);
  }

  // Schemas ---------------------------------------------------------------------------------

  schema(at: string, baseSchema: unknown, headSchema: unknown, direction: Direction, depth = 0): void {
    const base = this.resolve(this.base, baseSchema);
    const head = this.resolve(this.head, headSchema);
    if (base.ref || head.ref) {
      // A shared schema is compared once per direction (and reported where it is first met).
      const pair = `${direction} ${base.ref ?? '-'} ${head.ref ?? '-'}`;
      if (this.compared.has(pair)) return;
      this.compared.add(pair);
    }
    if (!base.node || depth > 64) return;
    if (!head.node) {
      this.report(at, 'schema removed');
      return;
    }
    const before = this.expand(this.base, base.node);
    const after = this.expand(this.head, head.node);
    const next = depth + 1;
    this.types(at, before, after, direction);
    if (direction === 'accepts') this.narrowing(at, before.core, after.core);
    else this.loosening(at, before.core, after.core);
    this.objects(at, before.core, after.core, direction, next);
    if (before.core.items !== undefined || after.core.items !== undefined) this.schema(`${at}[]`, before.core.items, after.core.items, direction, next);
    if (before.core.contentSchema !== undefined) this.schema(`${at} (content)`, before.core.contentSchema, after.core.contentSchema, direction, next);
    this.alternatives(at, before.core, after.core, direction, next);
  }

  /** `split`, with a nullable's other alternative followed when it is a $ref (`anyOf: [{$ref}, {type: 'null'}]`). */
  private expand(doc: Json, schema: Json): Split {
    const outer = split(schema);
    if (typeof outer.core.$ref !== 'string') return outer;
    const { $ref: _ref, ...siblings } = outer.core;
    const inner = split({ ...(this.resolve(doc, outer.core).node ?? {}), ...siblings });
    if (inner.types && outer.types?.has('null')) inner.types.add('null');
    return inner;
  }

  private types(at: string, before: Split, after: Split, direction: Direction): void {
    const [wide, narrow] = direction === 'accepts' ? [before, after] : [after, before];
    if (!wide.types || !narrow.types) {
      // No type on one side means any type: taking away "any" narrows what is accepted, and
      // answering any type where one was promised loosens what is answered.
      if (wide.types === undefined && narrow.types !== undefined) {
        this.report(at, direction === 'accepts' ? `now accepts only ${[...narrow.types].join(' or ')}` : 'may now be of any type');
      }
      return;
    }
    for (const type of wide.types) {
      const covered = narrow.types.has(type) || (type === 'integer' && narrow.types.has('number'));
      if (covered) continue;
      if (direction === 'accepts') this.report(at, type === 'null' ? 'null no longer accepted' : `type changed: ${type} no longer accepted (now ${[...narrow.types].join(' or ')})`);
      else this.report(at, type === 'null' ? 'may now be null' : `type changed: may now be ${type} (was ${[...narrow.types].join(' or ')})`);
    }
  }

  /** Keywords that restrict accepted values: any one tightened breaks a request. */
  private narrowing(at: string, before: Json, after: Json): void {
    const show = (v: unknown) => JSON.stringify(v);
    if (after.enum !== undefined) {
      const allowed = after.enum as unknown[];
      if (before.enum === undefined) this.report(at, `now limited to the values ${allowed.map(show).join(', ')}`);
      else for (const value of before.enum as unknown[]) if (!allowed.some((a) => show(a) === show(value))) this.report(at, `value ${show(value)} no longer accepted`);
    }
    if (after.const !== undefined && show(after.const) !== show(before.const)) this.report(at, `now accepts only ${show(after.const)}`);
    const lower = (key: string) => {
      const [a, b] = [before[key], after[key]] as (number | undefined)[];
      if (b !== undefined && (a === undefined || b > a)) this.report(at, `${key} ${a === undefined ? 'added' : 'raised'}: ${a ?? 'none'} → ${b}`);
    };
    const upper = (key: string) => {
      const [a, b] = [before[key], after[key]] as (number | undefined)[];
      if (b !== undefined && (a === undefined || b < a)) this.report(at, `${key} ${a === undefined ? 'added' : 'lowered'}: ${a ?? 'none'} → ${b}`);
    };
    for (const key of ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']) lower(key);
    for (const key of ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']) upper(key);
    for (const key of ['pattern', 'format', 'multipleOf', 'contentMediaType']) {
      if (after[key] !== undefined && after[key] !== before[key]) this.report(at, `${key} ${before[key] === undefined ? 'added' : 'changed'}: ${show(before[key] ?? null)} → ${show(after[key])}`);
    }
    if (after.uniqueItems === true && before.uniqueItems !== true) this.report(at, 'items must now be unique');
    if (show(before.default) !== show(after.default)) this.report(at, `default changed: ${show(before.default ?? null)} → ${show(after.default ?? null)}`);
  }

  /** What a client may rely on in an answer: a constant value. (New enum values and looser bounds are for clients to tolerate.) */
  private loosening(at: string, before: Json, after: Json): void {
    if (before.const !== undefined && JSON.stringify(after.const) !== JSON.stringify(before.const)) {
      this.report(at, `no longer always ${JSON.stringify(before.const)}`);
    }
  }

  private objects(at: string, before: Json, after: Json, direction: Direction, depth: number): void {
    const props = (s: Json) => (s.properties ?? {}) as Record<string, unknown>;
    const required = (s: Json) => new Set((s.required ?? []) as string[]);
    const [beforeProps, afterProps] = [props(before), props(after)];
    const [beforeRequired, afterRequired] = [required(before), required(after)];
    for (const [name, schema] of Object.entries(beforeProps)) {
      const field = at.endsWith('→') ? `${at} ${name}` : `${at}.${name}`;
      if (!(name in afterProps)) {
        this.report(at, direction === 'accepts' ? `field \`${name}\` removed (or renamed): requests that send it are refused or lose its meaning` : `field \`${name}\` removed (or renamed)`);
        continue;
      }
      if (direction === 'answers' && beforeRequired.has(name) && !afterRequired.has(name)) this.report(at, `field \`${name}\` may now be absent`);
      this.schema(field, schema, afterProps[name], direction, depth);
    }
    if (direction === 'accepts') {
      for (const name of afterRequired) if (!beforeRequired.has(name)) this.report(at, `field \`${name}\` is now required`);
      if (after.additionalProperties === false && before.additionalProperties !== false && (before.type === 'object' || before.properties)) {
        this.report(at, 'closed (additionalProperties: false): fields it accepted before are refused');
      }
    }
  }

  /** anyOf / oneOf / allOf beyond a nullable's: alternatives compared in order. */
  private alternatives(at: string, before: Json, after: Json, direction: Direction, depth: number): void {
    for (const key of ['anyOf', 'oneOf', 'allOf']) {
      const [a, b] = [(before[key] ?? []) as unknown[], (after[key] ?? []) as unknown[]];
      if (a.length === 0 && b.length === 0) continue;
      if (key !== 'allOf' && direction === 'accepts' && b.length < a.length) this.report(at, `${key}: ${a.length - b.length} alternative(s) fewer accepted`);
      if (key !== 'allOf' && direction === 'answers' && b.length > a.length && a.length > 0) this.report(at, `${key}: ${b.length - a.length} new alternative(s) in answers`);
      if (key === 'allOf' && direction === 'accepts' && b.length > a.length) this.report(at, 'allOf: more conditions to meet');
      for (let i = 0; i < Math.min(a.length, b.length); i++) this.schema(`${at} (${key} ${i + 1})`, a[i], b[i], direction, depth);
    }
  }
}

interface Split {
  /** The schema without its null alternative. */
  core: Json;
  /** Its types, null included; undefined when it does not say (any type). */
  types?: Set<string>;
}

/** A schema's types, with the `anyOf: [X, {type: 'null'}]` and `type: [X, 'null']` forms of nullable read alike. */
function split(schema: Json): Split {
  let core = schema;
  let nullable = false;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alternatives = schema[key] as Json[] | undefined;
    if (!alternatives) continue;
    const isNull = (s: Json) => s.type === 'null' || (s.const === null && s.type === undefined);
    const rest = alternatives.filter((s) => !isNull(s));
    if (rest.length === 1 && alternatives.length === 2) {
      const { [key]: _alternatives, ...outer } = schema;
      core = { ...outer, ...rest[0] };
      nullable = true;
    }
  }
  let types: Set<string> | undefined;
  if (core.type !== undefined) types = new Set([core.type].flat() as string[]);
  else if (core.enum !== undefined) types = new Set((core.enum as unknown[]).map(typeOfValue));
  else if (core.const !== undefined) types = new Set([typeOfValue(core.const)]);
  else if (core.properties !== undefined) types = new Set(['object']);
  if (types && nullable) types.add('null');
  return { core, ...(types ? { types } : {}) };
}

const typeOfValue = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v === 'boolean' ? 'boolean' : typeof v;

/** Every breaking change from `base` to `head`, in document order. */
export function breakingChanges(base: Json, head: Json): BreakingChange[] {
  return new Comparison(base, head).run();
}
