// Limits and addresses of calendar feeds, shared by the service, the feed and the settings
// page (so nothing here may import server-only modules).

/** Active (unrevoked) feeds per user: enough for every calendar app of a team member. */
export const MAX_ACTIVE_FEEDS = 10;
/** The length of calendar_feeds.name. */
export const FEED_NAME_MAX_LENGTH = 64;
/** How far back the feed reaches: dates from this many days before today (UTC) onwards. */
export const FEED_WINDOW_DAYS = 365;
/** Where feeds are served; the file name is `<token>.ics`. */
export const FEED_PATH_PREFIX = '/api/v1/calendar/';

export function feedUrlOf(origin: string, token: string): string {
  return `${origin}${FEED_PATH_PREFIX}${token}.ics`;
}

/**
 * The same address with the webcal scheme, which operating systems hand to the default
 * calendar app as a subscription (the app then fetches it over https, or http locally).
 */
export function webcalUrlOf(feedUrl: string): string {
  return feedUrl.replace(/^https?:\/\//, 'webcal://');
}
