import type { Database } from '@/db/client';
import { insertKeyAccessEvents } from '@/db/queries/events';
import { selectMemberIds } from '@/db/queries/memberships';
import { lockKeyReachesOf, lockOrganizationReach, selectPersonalKeyReaches, type KeyReach, type KeyReachChange } from '@/db/queries/token-scope';

/**
 * "Lost access is an event too" (docs/api-guide.md, "The event list"): a change that can
 * narrow or widen what people's personal API keys reach (a membership ending or starting,
 * a key's access edited, "remove access", an organisation's policy) runs through
 * `withAccessEvents` (naming the people, or the organisation whose members it concerns),
 * which reads what each of those people's keys reaches before and
 * after the change, in the change's transaction, by the rule the scope is read with
 * (db/queries/token-scope.ts), and writes one `access.reduced` and/or `access.expanded`
 * event in each key's own list for what differs. The events commit with the change, so
 * they stand at its place in the list: a copy drops (or fetches) the organisations named
 * exactly where its contracts' events stop (or start) reaching the key.
 *
 * An organisation's own keys reach their organisation whatever happens to memberships:
 * they get no such event.
 */
export async function withAccessEvents<T>(tx: Database, who: { userIds?: readonly string[]; organizationId?: string }, change: () => Promise<T>): Promise<T> {
  // Two changes about the same people one after the other, each reading the other's result
  // (otherwise both could read the same "before" and tell a key one change twice, or a
  // policy change could miss a member joining meanwhile): the organisation's lock first,
  // then, with its members read under it, each person's.
  if (who.organizationId) await lockOrganizationReach(tx, who.organizationId);
  const members = who.organizationId && !who.userIds ? await selectMemberIds(tx, who.organizationId) : [];
  const people = [...new Set([...(who.userIds ?? []), ...members])].sort();
  await lockKeyReachesOf(tx, people);
  const before = await selectPersonalKeyReaches(tx, people);
  const result = await change();
  const after = await selectPersonalKeyReaches(tx, people);
  await insertKeyAccessEvents(tx, keyReachChanges(before, after));
  return result;
}

/** The keys whose reach differs between `before` and `after` (a key in only one of them reached nothing in the other). */
function keyReachChanges(before: readonly KeyReach[], after: readonly KeyReach[]): KeyReachChange[] {
  const nothing = { personal: false, organizationIds: [] as string[] };
  const was = new Map(before.map((r) => [r.tokenId, r]));
  const now = new Map(after.map((r) => [r.tokenId, r]));
  const changes: KeyReachChange[] = [];
  for (const tokenId of [...new Set([...was.keys(), ...now.keys()])].sort()) {
    const b = was.get(tokenId) ?? nothing;
    const a = now.get(tokenId) ?? nothing;
    const change = {
      tokenId,
      reduced: { personal: b.personal && !a.personal, organizationIds: b.organizationIds.filter((id) => !a.organizationIds.includes(id)).sort() },
      expanded: { personal: a.personal && !b.personal, organizationIds: a.organizationIds.filter((id) => !b.organizationIds.includes(id)).sort() },
    };
    if (change.reduced.personal || change.expanded.personal || change.reduced.organizationIds.length > 0 || change.expanded.organizationIds.length > 0) changes.push(change);
  }
  return changes;
}
