import { router } from './init';
import { contractsRouter } from './routers/contracts';
import { eventsRouter } from './routers/events';
import { keyActivityRouter } from './routers/key-activity';
import { securityLogRouter } from './routers/security-log';
import { apiKeysRouter, calendarFeedsRouter, organizationKeysRouter } from './routers/tokens';
import { webhooksRouter } from './routers/webhooks';

/**
 * Two routers, served by two endpoints that never share a procedure:
 * - the public REST API (/api/v1, X-API-Key, in the OpenAPI document);
 * - the app's own endpoint (/api/trpc, session cookie), which serves nothing else, so a
 *   public operation cannot be reached there around its API key and rate limit.
 */
export const restRouter = router({
  contracts: contractsRouter,
  events: eventsRouter,
});

export const internalRouter = router({
  apiKeys: apiKeysRouter,
  calendarFeeds: calendarFeedsRouter,
  keyActivity: keyActivityRouter,
  securityLog: securityLogRouter,
  organizationKeys: organizationKeysRouter,
  webhooks: webhooksRouter,
});

export type InternalRouter = typeof internalRouter;
