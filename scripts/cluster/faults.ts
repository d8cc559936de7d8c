import { existsSync, readFileSync, statSync } from 'node:fs';
import { haproxyPid, serverStats } from './haproxy';
import { instanceLog, instanceNumbers, instancePid, startInstance, stopInstance } from './instances';
import { readState, secrets, stateDir, type State } from './layout';
import { ensurePrograms } from './packages';
import { pgbouncerPid } from './pgbouncer';
import { ensureReplica, primaryPid, stopPostgres } from './postgres';
import { sleep } from './processes';
import { redisPid, startRedis, stopRedis } from './redis';

/**
 * The faults `npm run soak -- --url … --faults` plays on the local cluster while the load
 * runs: one instance killed with SIGKILL (no chance to finish anything) and started again
 * a few seconds later, then the read replica stopped and started again (reads go to the
 * primary meanwhile), then the cluster's Redis stopped and started again (its counters
 * are gone: no persistence). Everything else must keep running untouched.
 */

/** The instance that is killed. */
export const VICTIM = 2;

export interface FaultTimeline {
  victim: string;
  /** Milliseconds after the start of the soak. */
  killedAt: number;
  /** Requests HAProxy had in progress on the victim just before the kill: the most that may be lost. */
  inFlightAtKill: number;
  /** From the kill until HAProxy's health check took the instance out. */
  markedDownAfterMs: number | null;
  restartedAt: number;
  /** `next start` until it answered on its own port. */
  restartServingAfterMs: number;
  /** From the restart until HAProxy sent it traffic again. */
  markedUpAfterMs: number | null;
  replicaStoppedAt: number;
  /** Replica stopped until it accepted connections again. */
  replicaDownMs: number;
  /** Where each instance's log stood when the replica was stopped (replicaRecovery reads on from there). */
  logOffsetsAtReplicaStop: Record<number, number>;
  redisStoppedAt: number;
  /** Redis stopped until it accepted connections again. */
  redisDownMs: number;
  /** HAProxy's retries and redispatches so far, before the faults (retryCounters). */
  countersBefore: { retries: number; redispatches: number };
  /** Pids of every other part before the faults: they must be the same after the soak (otherPids). */
  othersBefore: Record<string, number | undefined>;
}

/** Requests HAProxy tried again (connection retries) and sent to another instance, since it started. */
export async function retryCounters(s: State): Promise<{ retries: number; redispatches: number }> {
  const stats = await serverStats(s);
  return { retries: stats.reduce((n, sv) => n + sv.retries, 0), redispatches: stats.reduce((n, sv) => n + sv.redispatches, 0) };
}

/** Pids of every part of the cluster but the victim, the replica and Redis. */
export function otherPids(s: State): Record<string, number | undefined> {
  const pids: Record<string, number | undefined> = { haproxy: haproxyPid(s), pgbouncer: pgbouncerPid(s), primary: primaryPid(s) };
  for (const n of instanceNumbers(s)) if (n !== VICTIM) pids[`app${n}`] = instancePid(s, n);
  return pids;
}

/** The cluster the soak may break, checked before the load starts. */
export function faultableCluster(): State {
  const s = readState();
  if (!s || haproxyPid(s) === undefined) throw new Error(`--faults needs the local cluster running (npm run cluster; state in ${stateDir()})`);
  if (instancePid(s, VICTIM) === undefined || redisPid(s) === undefined) throw new Error(`--faults: instance ${VICTIM} or Redis of the cluster is not running (npm run cluster -- status)`);
  return s;
}

async function waitForStatus(s: State, name: string, want: (status: string) => boolean, since: number, timeoutMs: number): Promise<number | null> {
  while (Date.now() - since < timeoutMs) {
    const server = (await serverStats(s).catch(() => [])).find((sv) => sv.name === name);
    if (server && want(server.status)) return Date.now() - since;
    await sleep(100);
  }
  return null;
}

/**
 * Plays the faults over a soak of `durationS` seconds that started at `start` (ms):
 * the kill at a quarter, the restart a few seconds later, Redis at 70 %.
 */
export async function playFaults(s: State, start: number, durationS: number, say: (line: string) => void): Promise<FaultTimeline> {
  const sec = secrets(s.dir);
  const programs = ensurePrograms(say);
  const name = `app${VICTIM}`;
  const othersBefore = otherPids(s);
  const countersBefore = await retryCounters(s);
  const at = async (fraction: number) => {
    const wait = start + fraction * durationS * 1000 - Date.now();
    if (wait > 0) await sleep(wait);
  };

  await at(0.25);
  const inFlightAtKill = (await serverStats(s)).find((sv) => sv.name === name)?.current ?? 0;
  await stopInstance(s, VICTIM, 'SIGKILL');
  const killed = Date.now();
  say(`fault: ${name} killed (SIGKILL) with ${inFlightAtKill} requests in progress on it`);
  const markedDownAfterMs = await waitForStatus(s, name, (st) => st.startsWith('DOWN'), killed, 15_000);

  const restartDelay = Math.max(2_000, 0.1 * durationS * 1000) - (Date.now() - killed);
  if (restartDelay > 0) await sleep(restartDelay);
  const restarted = Date.now();
  await startInstance(s, sec, VICTIM);
  const restartServingAfterMs = Date.now() - restarted;
  const markedUpAfterMs = await waitForStatus(s, name, (st) => st === 'UP', restarted, 30_000);
  say(`fault: ${name} started again, serving after ${(restartServingAfterMs / 1000).toFixed(1)} s, back in HAProxy after ${markedUpAfterMs === null ? '?' : (markedUpAfterMs / 1000).toFixed(1)} s`);

  await at(0.45);
  const logOffsetsAtReplicaStop = Object.fromEntries(instanceNumbers(s).map((n) => [n, logSize(s, n)]));
  const replicaStopped = Date.now();
  await stopPostgres(s, 'replica', programs);
  say('fault: read replica stopped (reads go to the primary)');
  await at(0.55);
  await ensureReplica(s, sec, programs, () => {});
  const replicaDownMs = Date.now() - replicaStopped;
  say(`fault: read replica started again (down ${(replicaDownMs / 1000).toFixed(1)} s)`);

  await at(0.7);
  const redisStopped = Date.now();
  await stopRedis(s);
  await startRedis(s, sec, programs);
  const redisDownMs = Date.now() - redisStopped;
  say(`fault: Redis restarted (down ${redisDownMs} ms; its counters are gone)`);

  return {
    victim: name,
    killedAt: killed - start,
    inFlightAtKill,
    markedDownAfterMs,
    restartedAt: restarted - start,
    restartServingAfterMs,
    markedUpAfterMs,
    replicaStoppedAt: replicaStopped - start,
    replicaDownMs,
    logOffsetsAtReplicaStop,
    redisStoppedAt: redisStopped - start,
    redisDownMs,
    countersBefore,
    othersBefore,
  };
}

const logSize = (s: State, n: number) => (existsSync(instanceLog(s, n)) ? statSync(instanceLog(s, n)).size : 0);

export interface ReplicaRecovery {
  /** Instances whose log says they left the replica out after it was stopped. */
  leftOut: string[];
  /** Instances whose last word on the replica since the stop is that they read from it again. */
  backOnReplica: string[];
}

/**
 * What each instance did about the stopped replica, from its own log since the stop
 * (server/database.ts logs each change): it left the replica out (reads went to the
 * primary) and took it back once it was healthy again, without being restarted. Polls
 * for up to `waitMs` for the instances still probing it back.
 */
export async function replicaRecovery(s: State, faults: FaultTimeline, waitMs = 15_000): Promise<ReplicaRecovery> {
  const since = Date.now();
  for (;;) {
    const leftOut: string[] = [];
    const backOnReplica: string[] = [];
    for (const n of instanceNumbers(s)) {
      const text = existsSync(instanceLog(s, n)) ? readFileSync(instanceLog(s, n)).subarray(faults.logOffsetsAtReplicaStop[n] ?? 0).toString('utf8') : '';
      // The JSON log lines of server/database.ts (server/observability/logger.ts).
      const events = text.split('\n').filter((line) => line.includes('"msg":"read replica'));
      if (events.some((line) => line.includes('left out'))) leftOut.push(`app${n}`);
      if (events.at(-1)?.includes('in use')) backOnReplica.push(`app${n}`);
    }
    // Done when every instance that left the replica out has taken it back. An instance
    // that served no read while the replica was down (the victim, just back in the
    // balancer) never noticed: it has nothing to take back.
    if ((leftOut.length > 0 && leftOut.every((name) => backOnReplica.includes(name))) || Date.now() - since > waitMs) return { leftOut, backOnReplica };
    await sleep(500);
  }
}
