'use client';

import { useSyncExternalStore } from 'react';

// A shared clock that ticks every 30 s, so relative times stay current without each
// component reading Date.now() during render.
let clock = Date.now();
function subscribe(onTick: () => void) {
  const timer = setInterval(() => {
    clock = Date.now();
    onTick();
  }, 30_000);
  return () => clearInterval(timer);
}
const currentTime = () => clock;
const serverTime = () => Date.now();
function useNow(): number {
  return useSyncExternalStore(subscribe, currentTime, serverTime);
}

const exact = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'long',
  timeZone: 'UTC',
});
const short = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

function relativeTime(date: Date, now: number): string {
  const seconds = Math.round((date.getTime() - now) / 1000);
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ['year', 31_536_000],
    ['month', 2_592_000],
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
  ];
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return relative.format(Math.trunc(seconds / size), unit);
  }
  return Math.abs(seconds) < 10 ? 'just now' : relative.format(seconds, 'second');
}

/** A time shown relatively ("3 minutes ago"), with the exact UTC time on hover. */
export function RelativeTime({ iso, fallback }: { iso: string | null; fallback: string }) {
  const now = useNow();
  if (!iso) return <span className="muted">{fallback}</span>;
  const date = new Date(iso);
  return (
    <time dateTime={iso} title={exact.format(date)} suppressHydrationWarning>
      {relativeTime(date, now)}
    </time>
  );
}

/** A calendar date, with the exact UTC time on hover. */
export function DateOnly({ iso, fallback }: { iso: string | null; fallback: string }) {
  if (!iso) return <span className="muted">{fallback}</span>;
  const date = new Date(iso);
  return (
    <time dateTime={iso} title={exact.format(date)}>
      {short.format(date)}
    </time>
  );
}
