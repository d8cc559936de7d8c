/** Addresses and the window of calendar feeds, shared by the feed, the service and the settings page. */
import { API_PREFIX } from './api';

/** How far back the feed reaches: dates from this many days before today (UTC) onwards. */
export const FEED_WINDOW_DAYS = 365;
/** A notice deadline's reminder: how many days before it, chosen when a feed is created (0: on the day). */
export const NOTICE_REMINDER_CHOICES = [0, 3, 7, 14, 30, 60] as const;
export const DEFAULT_NOTICE_REMINDER_DAYS = 14;
export const MAX_NOTICE_REMINDER_DAYS = 60;

/** Where feeds are served; the file name is `<token>.ics`. */
export const FEED_PATH_PREFIX = `${API_PREFIX}/calendar/`;
export const FEED_FILE_SUFFIX = '.ics';

export function feedUrlOf(origin: string, token: string): string {
  return `${origin}${FEED_PATH_PREFIX}${token}${FEED_FILE_SUFFIX}`;
}

/**
 * The same address with the webcal scheme, which operating systems hand to the default
 * calendar app as a subscription (the app then fetches it over https, or http locally).
 */
export function webcalUrlOf(feedUrl: string): string {
  return feedUrl.replace(/^https?:\/\//, 'webcal://');
}
