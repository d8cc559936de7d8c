import bcrypt from 'bcryptjs';

const COST = 11;
// Compared against when the email is unknown, so that a wrong email and a wrong
// password take the same time and give the same answer.
const DUMMY_HASH = bcrypt.hashSync('not-a-real-password', COST);

export const PASSWORD_MIN_LENGTH = 10;
/** bcrypt reads at most 72 bytes: longer passwords are refused rather than silently cut. */
export const PASSWORD_MAX_BYTES = 72;

export function passwordTooLong(password: string): boolean {
  return Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES;
}

export function hashPassword(password: string): Promise<string> {
  if (passwordTooLong(password)) throw new Error(`Passwords are at most ${PASSWORD_MAX_BYTES} bytes`);
  return bcrypt.hash(password, COST);
}

export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  // A longer password could only match by its first 72 bytes: never accept one.
  const candidate = passwordTooLong(password) ? '' : password;
  const ok = await bcrypt.compare(candidate, hash ?? DUMMY_HASH);
  return ok && Boolean(hash) && candidate === password;
}
