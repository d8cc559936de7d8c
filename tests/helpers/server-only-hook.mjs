// For test code that runs the app's server modules in a plain Node process (next-auth's
// route handlers in a child process): `server-only` stands for "never in a browser
// bundle", which Next.js checks at build time; outside Next.js it would throw. The
// react-server export condition would silence it too, but also swaps React for its server
// build, which next-auth's client-side modules cannot load.
//   node --import ./tests/helpers/server-only-hook.mjs --import tsx file.ts
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';

const empty = pathToFileURL(new URL('../../node_modules/server-only/empty.js', import.meta.url).pathname).href;
register(
  `data:text/javascript,${encodeURIComponent(
    `export async function resolve(specifier, context, next) { return specifier === 'server-only' ? { url: ${JSON.stringify(empty)}, shortCircuit: true } : next(specifier, context); }`,
  )}`,
);
