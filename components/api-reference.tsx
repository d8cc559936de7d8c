'use client';

import Script from 'next/script';
import { useEffect, useRef, useState } from 'react';

/** The part of the standalone bundle's global this page uses. */
interface ScalarGlobal {
  createApiReference(element: HTMLElement, configuration: Record<string, unknown>): { destroy(): void };
}

declare global {
  interface Window {
    Scalar?: ScalarGlobal;
  }
}

/**
 * Scalar's options for this page. Each one that is not about looks keeps the page inside
 * this origin or keeps the reader's key out of storage:
 * - `persistAuth: false`: the key typed into "Test request" lives in memory only (it is
 *   Scalar's default; set here so that an upgrade that changes it does not change us).
 *   e2e/api-reference.spec.ts checks storage and cookies after a request.
 * - `servers`: requests go to the origin the page was loaded from, never through a proxy
 *   (`proxyUrl` unset: Scalar's hosted proxy would see the key).
 * - `withDefaultFonts: false`, `telemetry: false`, `agent.disabled`: no requests to
 *   Scalar's font host, analytics or AI agent.
 * - `hiddenClients: true`: only the document's own x-codeSamples are offered (curl,
 *   fetch, the typed client, Python), which the test suites run against the API.
 */
export function scalarConfiguration(documentUrl: string, origin: string): Record<string, unknown> {
  return {
    url: documentUrl,
    servers: [{ url: `${origin}/api/v1`, description: 'This server' }],
    persistAuth: false,
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    showDeveloperTools: 'never',
    hiddenClients: true,
    // "Open API Client" would send the reader to Scalar's hosted client, outside this origin.
    hideClientButton: true,
    documentDownloadType: 'json',
    authentication: { preferredSecurityScheme: 'ApiKeyAuth' },
    layout: 'modern',
    theme: 'default',
    forceDarkModeState: 'light',
    hideDarkModeToggle: true,
    defaultOpenAllTags: true,
    orderSchemaPropertiesBy: 'preserve',
    orderRequiredPropertiesFirst: false,
    showOperationId: true,
    customCss: PHONE_CSS,
  };
}

/**
 * At phone width, a heading that fills its line (`contract.extraction_completed`) had its
 * "Copy link" button (invisible until focused) hanging past the right edge, which widened
 * the whole page: the button goes over the heading's end instead; and a longer one beside
 * its badges (`contractNoticeDeadlineUpcomingWebhook`, "Webhook") pushed the row past the
 * edge: the row wraps and a long name breaks anywhere (e2e/phone-layout.spec.ts).
 */
const PHONE_CSS = `@media (max-width: 600px) {
  .scalar-api-reference .section-header .group\\/heading > span.relative > button { left: auto; right: 0; }
  .scalar-api-reference .section-header .group\\/heading { min-width: 0; max-width: 100%; overflow-wrap: anywhere; }
  .scalar-api-reference .flex.gap-1:has(> .badge) { flex-wrap: wrap; min-width: 0; max-width: 100%; }
  .scalar-api-reference .flex.gap-1 > .badge { max-width: 100%; min-width: 0; overflow-wrap: anywhere; }
}`;

/**
 * The interactive API reference: Scalar's standalone bundle, served by this app, mounted
 * on a div once the script has loaded, and destroyed when the page unmounts.
 */
export function ApiReference({ bundleUrl, documentUrl }: { bundleUrl: string; documentUrl: string }) {
  const mountPoint = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading');

  useEffect(() => {
    const element = mountPoint.current;
    if (state !== 'ready' || !element || !window.Scalar) return;
    const reference = window.Scalar.createApiReference(element, scalarConfiguration(documentUrl, window.location.origin));
    return () => reference.destroy();
  }, [state, documentUrl]);

  return (
    <>
      <Script src={bundleUrl} strategy="afterInteractive" onReady={() => setState('ready')} onError={() => setState('failed')} />
      {state === 'loading' ? (
        <p className="page muted" role="status">
          Loading the API reference…
        </p>
      ) : null}
      {state === 'failed' ? (
        <p className="page" role="alert">
          The API reference could not be loaded. The OpenAPI document is at <a href={documentUrl}>{documentUrl}</a>.
        </p>
      ) : null}
      <div ref={mountPoint} className="api-reference" />
    </>
  );
}
