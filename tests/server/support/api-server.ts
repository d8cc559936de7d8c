/**
 * The API as a running server process of its own (its own key cache, its own rate-limit
 * store connection), for tests of what reaches a running server from another process
 * (`npm run apikey -- revoke`). Serves /api/v1 on 127.0.0.1 and prints `listening <port>`.
 * The database and the store come from the environment, as for `next start`.
 *
 *   node --import ./tests/helpers/server-only-hook.mjs --import tsx tests/server/support/api-server.ts
 */
import { createServer } from 'node:http';
import { handleApiRequest } from '@/server/rest/router';

const server = createServer(async (req, res) => {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  const response = await handleApiRequest(new Request(`http://127.0.0.1${req.url ?? '/'}`, { method: req.method, headers }));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : ''}`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
