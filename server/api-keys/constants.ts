// Limits of key management, shared by the service and the settings page.
export const MAX_ACTIVE_KEYS = 25;
export const NAME_MAX_LENGTH = 64;
/** Expiry choices offered to users, in days; null means the key never expires. */
export const EXPIRY_CHOICES = [7, 30, 90, 365, null] as const;
export type ExpiryChoice = (typeof EXPIRY_CHOICES)[number];
export const DEFAULT_EXPIRY: ExpiryChoice = 90;
