import { router } from './init';
import { apiKeysRouter } from './routers/api-keys';
import { contractsRouter } from './routers/contracts';

/** Every procedure of the app: public REST operations and the app's own. */
export const appRouter = router({
  contracts: contractsRouter,
  apiKeys: apiKeysRouter,
});

export type AppRouter = typeof appRouter;
