import { context, propagation, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { operationOf, setStatementHook, statementHook } from '@/db/statement-hook';
import { redactUrl } from '@/server/observability/otel';
import { tracingConfigured } from '@/server/observability/tracing-config';

/**
 * Tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT): the span helpers must do nothing but run
 * the work they wrap, without a single call into the OpenTelemetry API, and no statement
 * hook may be installed. The module reads the environment once when it loads, so each
 * case loads it afresh under the environment it needs. The exported spans themselves are
 * tested against a real OTLP receiver and `next start` in e2e/traces.spec.ts.
 */

const OTEL_VARIABLES = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_SDK_DISABLED'];

async function loadTracing(env: Record<string, string>) {
  for (const name of OTEL_VARIABLES) vi.stubEnv(name, env[name] ?? '');
  vi.resetModules();
  return import('@/server/observability/tracing');
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('with no OTLP endpoint', () => {
  it('every helper runs its work and returns its result without touching the OpenTelemetry API', async () => {
    const tracing = await loadTracing({});
    expect(tracing.TRACING).toBe(false);
    const api = [
      vi.spyOn(trace, 'getTracer'),
      vi.spyOn(trace, 'getActiveSpan'),
      vi.spyOn(trace, 'getSpan'),
      vi.spyOn(trace, 'setSpan'),
      vi.spyOn(context, 'active'),
      vi.spyOn(context, 'with'),
      vi.spyOn(propagation, 'inject'),
      vi.spyOn(propagation, 'extract'),
    ];

    const seen: unknown[] = [];
    await expect(tracing.inSpan('work', async (span) => (seen.push(span), 42))).resolves.toBe(42);
    await expect(tracing.inRootSpan('delivery', async (span) => (seen.push(span), 'sent'))).resolves.toBe('sent');
    expect(seen).toEqual([undefined, undefined]);
    await expect(tracing.inSpan('failing', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');

    const answer = new Response('{"ok":true}', { status: 201, headers: { 'content-type': 'application/json' } });
    const served = await tracing.traceApiRequest(new Request('http://localhost/api/v1/contracts?q=x'), async () => {
      tracing.setRequestRoute('/api/v1/contracts', '/api/v1/contracts');
      return answer;
    });
    // The very response, not a copy with a wrapped body.
    expect(served).toBe(answer);
    const routed = await tracing.traceRoute(new Request('http://localhost/contracts/export'), '/contracts/export', async () => answer);
    expect(routed).toBe(answer);

    async function* pages() {
      yield [1, 2];
    }
    const generator = pages();
    expect(tracing.tracedPages(generator, 'export page', (rows) => rows.length)).toBe(generator);
    expect(tracing.traceContextHeaders()).toEqual({});
    expect(tracing.currentTraceId()).toBeUndefined();

    for (const spy of api) expect(spy, spy.getMockName()).not.toHaveBeenCalled();
  });

  it('installs no statement hook: the client sends each statement without a span helper', async () => {
    setStatementHook(undefined);
    await loadTracing({});
    expect(statementHook()).toBeUndefined();
  });
});

describe('with an OTLP endpoint', () => {
  it('turns the helpers on and installs the statement hook', async () => {
    const tracing = await loadTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
    expect(tracing.TRACING).toBe(true);
    expect(statementHook()).toBeTypeOf('function');
    // Outside any span (no tracer provider here, nothing active) the work still just runs;
    // the helper did look (which also shows the spies above see the module's calls).
    const active = vi.spyOn(context, 'active');
    await expect(tracing.inSpan('work', async () => 7)).resolves.toBe(7);
    expect(active).toHaveBeenCalled();
    setStatementHook(undefined);
  });
});

describe('tracingConfigured', () => {
  it('is on with either endpoint variable, off without one or when the SDK is disabled', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otlp.example.com/v1/traces' })).toBe(true);
    // @vercel/otel reads any non-empty value as "disabled".
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com', OTEL_SDK_DISABLED: 'false' })).toBe(false);
  });
});

describe('redactUrl', () => {
  it('drops query strings and fragments and masks calendar feed tokens', () => {
    expect(redactUrl('/api/v1/contracts?q=secret&api_key=cda_x')).toBe('/api/v1/contracts');
    expect(redactUrl('/api/v1/calendar/cdacal_abcdef0123456789.ics')).toBe('/api/v1/calendar/{token}.ics');
    expect(redactUrl('/api/v1/calendar/cdacal_abc.ics?x=1')).toBe('/api/v1/calendar/{token}.ics');
    expect(redactUrl('https://host.example/api/v1/calendar/anything-at-all')).toBe('https://host.example/api/v1/calendar/{token}.ics');
    expect(redactUrl('/contracts#top')).toBe('/contracts');
    expect(redactUrl('/api/v1/contracts/3f0e8f1e-0000-4000-8000-000000000000')).toBe('/api/v1/contracts/3f0e8f1e-0000-4000-8000-000000000000');
  });
});

describe('operationOf', () => {
  it('is the first keyword, or the outer verb of a data-modifying CTE', () => {
    expect(operationOf('select "id" from "contracts" where "id" = $1')).toBe('SELECT');
    expect(operationOf('  insert into x values ($1)')).toBe('INSERT');
    expect(operationOf('WITH claimed AS (SELECT id FROM d FOR UPDATE SKIP LOCKED) UPDATE d SET x = 1 FROM claimed RETURNING d.id')).toBe('UPDATE');
    expect(operationOf('with a as (select 1), b as (select 2) select * from a, b where x in (select 3)')).toBe('SELECT');
    expect(operationOf('(select "id" from a) union all (select "id" from b) order by 1')).toBe('SELECT');
    expect(operationOf('')).toBe('UNKNOWN');
  });
});
