import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who is acting, for the security log: set once where a request is known to come from
 * someone (the app's tRPC procedures for a signed-in person, the sign-in and sign-up
 * paths, the command line), read by every event written meanwhile, so that services do not
 * carry the actor, the address and the user agent through their signatures. Outside any
 * scope (the worker, the retention job) the actor is "system".
 */
export interface SecurityActor {
  kind: 'user' | 'api_key' | 'system';
  userId: string | null;
  /** What the log shows: the person's e-mail, "API key NAME", "system", "command line". */
  label: string;
  clientAddress: string | null;
  userAgent: string | null;
  /** Set by endAllSessions within the scope: its event is written once per action. */
  endedSessionsOf?: string;
}

const scope = new AsyncLocalStorage<SecurityActor>();

export const SYSTEM_ACTOR: SecurityActor = { kind: 'system', userId: null, label: 'system', clientAddress: null, userAgent: null };

export function withActor<T>(actor: SecurityActor, run: () => T): T {
  return scope.run(actor, run);
}

export function currentActor(): SecurityActor {
  return scope.getStore() ?? { ...SYSTEM_ACTOR };
}

/** At most 300 characters: the header is the client's to fill. */
export function userAgentOf(headers: Headers): string | null {
  const agent = headers.get('user-agent');
  return agent === null ? null : agent.slice(0, 300);
}

/** The actor of a request from `headers` on behalf of a person, with the client address as configured. */
export function personActor(user: { id: string; email: string }, address: { clientAddress: string | null; userAgent: string | null }): SecurityActor {
  return { kind: 'user', userId: user.id, label: user.email, ...address };
}
