import { z } from 'zod';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_LENGTH, passwordTooLong } from './passwords';

/**
 * The rules of a new password, wherever one is chosen: sign-up (server/actions/auth.ts
 * states the same two), a change in Settings → Account. At least PASSWORD_MIN_LENGTH
 * characters; at most PASSWORD_MAX_BYTES bytes, because bcrypt reads no further.
 */
export const newPasswordSchema = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `At least ${PASSWORD_MIN_LENGTH} characters.`)
  .refine((p) => !passwordTooLong(p), `At most ${PASSWORD_MAX_BYTES} bytes (${PASSWORD_MAX_BYTES} plain letters, fewer with accents or emoji).`);
