import { readFileSync } from 'node:fs';
import { cruise, type ICruiseResult, type IDependency, type IModule } from 'dependency-cruiser';

/**
 * `npm run check:layers`: the layout's rules (docs/architecture.md), checked on the
 * imports of the code as it is. Fails with one line per violation.
 *
 * 1. No import cycle.
 * 2. db/ imports nothing of server/, app/ or components/ (it takes its settings as arguments).
 * 3. lib/ is isomorphic: it imports nothing of server/, db/, app/ or components/.
 * 4. server/ imports nothing of app/ or components/.
 * 5. app/ never imports db/: pages call services.
 * 6. A client component ('use client') reaches no server/ or db/ module at run time,
 *    directly or through other modules (types and 'use server' actions are fine: the
 *    first are erased, the second become references to the server).
 * 7. Every server/ module that app/ or components/ import at run time starts with
 *    `import 'server-only'` (or is a 'use server' module), so that Next.js refuses to put
 *    it in a browser bundle.
 * 8. Inside server/, one direction: its rooms (a folder, or a module at its top) are in the
 *    layers of SERVER_LAYERS, and a room imports (types too) only its own layer and those
 *    below. A low room that needs a feature offers a registration point instead
 *    (observability/request.ts's onKeyRequest). A new room must be given a layer.
 */

const SOURCES = ['app', 'components', 'server', 'db', 'lib', 'instrumentation.ts'];

const FORBIDDEN: { name: string; from: RegExp; to: RegExp }[] = [
  { name: 'db-is-the-bottom-layer', from: /^db\//, to: /^(server|app|components)\// },
  { name: 'lib-is-isomorphic', from: /^lib\//, to: /^(server|db|app|components)\// },
  { name: 'server-does-not-import-ui', from: /^server\//, to: /^(app|components)\// },
  { name: 'pages-call-services-not-queries', from: /^app\//, to: /^db\// },
];

/** server/'s rooms by layer, lowest first (docs/architecture.md, "Layers inside server/"). */
export const SERVER_LAYERS: readonly { name: string; rooms: readonly string[] }[] = [
  { name: 'foundation', rooms: ['config', 'errors', 'dates', 'budget', 'csv', 'after-response', 'observability', 'http', 'database', 'database-settings', 'rate-limit', 'mail'] },
  { name: 'access', rooms: ['access', 'security-log', 'auth'] },
  { name: 'features', rooms: ['contracts', 'events', 'calendar', 'usage', 'webhooks', 'accounts'] },
  { name: 'transports', rooms: ['rest', 'trpc', 'actions', 'health', 'docs', 'startup'] },
];

/** The room of a server/ module (its folder, or its own name at the top), or undefined outside server/. */
const roomOf = (source: string) => /^server\/([^/]+?)(?:\.tsx?)?(?:\/|$)/.exec(source)?.[1];
const layerOf = (room: string) => SERVER_LAYERS.findIndex((layer) => layer.rooms.includes(room));

const firstStatement = (file: string) =>
  readFileSync(file, 'utf8')
    .replace(/^(\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*/, '')
    .split('\n', 1)[0]!
    .trim();
const isDirective = (file: string, directive: string) => new RegExp(`^['"]${directive}['"];?$`).test(firstStatement(file));
const marksServerOnly = (file: string) => /^import ['"]server-only['"];?$/m.test(readFileSync(file, 'utf8'));

/** A dependency that exists at run time (not `import type`, not a type-only use). */
const atRunTime = (d: IDependency) => !d.dependencyTypes.some((t) => t === 'type-only' || t === 'type-import' || t === 'pre-compilation-only');
const local = (d: IDependency) => !d.couldNotResolve && !d.coreModule && !d.resolved.includes('node_modules');

async function main() {
  const result = (
    await cruise(SOURCES, {
      tsConfig: { fileName: 'tsconfig.json' },
      tsPreCompilationDeps: true,
      combinedDependencies: false,
      exclude: { path: '(^|/)(node_modules|\\.next[^/]*)/' },
      validate: true,
      ruleSet: { forbidden: [{ name: 'no-cycles', severity: 'error', from: {}, to: { circular: true } }] },
    })
  ).output as ICruiseResult;

  const problems: string[] = [];
  const modules = new Map<string, IModule>(result.modules.map((m) => [m.source, m]));

  for (const violation of result.summary.violations) {
    const cycle = violation.cycle?.map((c) => c.name).join(' -> ');
    problems.push(`${violation.rule.name}: ${violation.from} -> ${violation.to}${cycle ? ` (${cycle})` : ''}`);
  }

  for (const mod of result.modules) {
    const room = roomOf(mod.source);
    if (room !== undefined && layerOf(room) < 0) problems.push(`server-room-without-layer: server/${room} (${mod.source}) is in no layer of SERVER_LAYERS`);
    for (const dependency of mod.dependencies.filter(local)) {
      const target = roomOf(dependency.resolved);
      if (room !== undefined && target !== undefined && layerOf(room) >= 0 && layerOf(target) > layerOf(room)) {
        problems.push(`server-import-against-layers: ${mod.source} (${SERVER_LAYERS[layerOf(room)]!.name}) -> ${dependency.resolved} (${SERVER_LAYERS[layerOf(target)]!.name})`);
      }
      for (const rule of FORBIDDEN) {
        if (rule.from.test(mod.source) && rule.to.test(dependency.resolved)) problems.push(`${rule.name}: ${mod.source} -> ${dependency.resolved}`);
      }
      if (/^(app|components)\//.test(mod.source) && /^server\//.test(dependency.resolved) && atRunTime(dependency)) {
        const target = dependency.resolved;
        if (!marksServerOnly(target) && !isDirective(target, 'use server')) problems.push(`server-entry-marked-server-only: ${target} (imported from app/ or components/) lacks import 'server-only'`);
      }
    }
  }

  // Client components: everything they reach at run time.
  for (const client of result.modules.filter((m) => /\.(ts|tsx)$/.test(m.source) && isDirective(m.source, 'use client'))) {
    const seen = new Set<string>();
    const stack: { source: string; via: string[] }[] = [{ source: client.source, via: [client.source] }];
    while (stack.length > 0) {
      const { source, via } = stack.pop()!;
      for (const dependency of modules.get(source)?.dependencies.filter(local).filter(atRunTime) ?? []) {
        const target = dependency.resolved;
        if (seen.has(target)) continue;
        seen.add(target);
        if (/^(server|db)\//.test(target)) {
          if (isDirective(target, 'use server')) continue;
          problems.push(`client-component-reaches-server: ${[...via, target].join(' -> ')}`);
          continue;
        }
        stack.push({ source: target, via: [...via, target] });
      }
    }
  }

  const unique = [...new Set(problems)];
  if (unique.length > 0) {
    console.error(`${unique.length} layering problem(s):\n${unique.map((p) => `  ${p}`).join('\n')}`);
    process.exit(1);
  }
  console.log(`Layers: ${result.summary.totalCruised} modules, ${result.summary.totalDependenciesCruised} imports, no cycle, every rule holds.`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
