import { buildOpenApiDocument } from './openapi-document';

/**
 * The REST API's route table, read from the served OpenAPI document (the procedures'
 * metadata plus the operations added by hand, such as the export), so that 404 and 405
 * answers cannot drift from what is documented and served.
 */
interface Route {
  pattern: RegExp;
  /** Whether the path has no parameter: a static path wins over a pattern, as in the App Router. */
  isStatic: boolean;
  methods: string[];
}

function buildRoutes(): Route[] {
  const paths = buildOpenApiDocument('').paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths).map(([path, item]) => ({
    // Literal characters (the "." of ".ics") escaped; each {parameter} is one segment.
    pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
    isStatic: !path.includes('{'),
    methods: Object.keys(item)
      .map((m) => m.toUpperCase())
      .sort(),
  }));
}

let routes: Route[] | undefined;

/** The methods served at a path below /api/v1 (empty when the path is unknown). */
export function allowedMethods(pathBelowV1: string): string[] {
  routes ??= buildRoutes();
  const matching = routes.filter((r) => r.pattern.test(pathBelowV1));
  const route = matching.find((r) => r.isStatic) ?? matching[0];
  return route ? [...route.methods, ...(route.methods.includes('GET') ? ['HEAD'] : [])] : [];
}
