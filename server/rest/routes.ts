import { appRouter } from '@/server/trpc/root';

/**
 * The REST API's route table, read from the procedures' OpenAPI metadata (plus the export
 * route, which is a plain route handler), so that 404 and 405 answers cannot drift from
 * what is served.
 */
export const EXPORT_PATH = '/contracts/export';

interface Route {
  pattern: RegExp;
  methods: string[];
}

function buildRoutes(): Route[] {
  const byPath = new Map<string, Set<string>>([[EXPORT_PATH, new Set(['POST'])]]);
  // _def.procedures is a flat record of every procedure by its dotted path.
  const procedures = appRouter._def.procedures as unknown as Record<
    string,
    { _def: { meta?: { openapi?: { method: string; path: string } } } }
  >;
  for (const procedure of Object.values(procedures)) {
    const openapi = procedure._def.meta?.openapi;
    if (!openapi) continue;
    const methods = byPath.get(openapi.path) ?? new Set<string>();
    methods.add(openapi.method);
    byPath.set(openapi.path, methods);
  }
  return [...byPath].map(([path, methods]) => ({
    pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    methods: [...methods].sort(),
  }));
}

let routes: Route[] | undefined;

/** The methods served at a path below /api/v1 (empty when the path is unknown). */
export function allowedMethods(pathBelowV1: string): string[] {
  routes ??= buildRoutes();
  // A static path (the export) wins over a pattern, as in the App Router.
  const exact = routes.find((r) => r.pattern.test(pathBelowV1) && !r.pattern.source.includes('[^/]+'));
  const route = exact ?? routes.find((r) => r.pattern.test(pathBelowV1));
  return route ? [...route.methods, ...(route.methods.includes('GET') ? ['HEAD'] : [])] : [];
}
