'use client';

import { createTRPCClient, httpLink } from '@trpc/client';
import type { InternalRouter } from '@/server/trpc/root';

/** The browser's client of the app's own tRPC endpoint (session cookie, same origin). */
export const trpc = createTRPCClient<InternalRouter>({
  links: [httpLink({ url: '/api/trpc', methodOverride: undefined })],
});
