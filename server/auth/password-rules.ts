import { z } from 'zod';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_LENGTH, passwordTooLong } from './passwords';

/** The rules of every new password: sign-up, a reset through a link, a change in Settings. */
export const newPasswordField = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `At least ${PASSWORD_MIN_LENGTH} characters.`)
  .refine((p) => !passwordTooLong(p), `At most ${PASSWORD_MAX_BYTES} bytes (${PASSWORD_MAX_BYTES} plain letters, fewer with accents or emoji).`);

export const emailField = z.string().trim().email('Enter a valid email address.').max(320);
