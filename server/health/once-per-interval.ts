/**
 * `run`, shared: a call starts it only when no run is in flight and the last one started
 * `intervalMs` or more ago; every other call gets the promise of the last run. So however
 * many callers (three balancers, or a flood), `run` starts at most once per interval and
 * never twice at once, and an answer is at most `intervalMs` older than its run's start
 * (plus the run's own time).
 */
export function oncePerInterval<T>(run: () => Promise<T>, intervalMs: number, now: () => number = Date.now): { get(): Promise<T>; reset(): void } {
  let last: { startedAt: number; promise: Promise<T>; settled: boolean } | undefined;
  return {
    get() {
      const at = now();
      if (last && (!last.settled || at - last.startedAt < intervalMs)) return last.promise;
      const current = { startedAt: at, promise: run(), settled: false };
      const settle = () => {
        current.settled = true;
      };
      current.promise.then(settle, settle);
      last = current;
      return current.promise;
    },
    reset() {
      last = undefined;
    },
  };
}
