import bcrypt from 'bcryptjs';

const COST = 11;
// Compared against when the email is unknown, so that a wrong email and a wrong
// password take the same time and give the same answer.
const DUMMY_HASH = bcrypt.hashSync('not-a-real-password', COST);

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 128; // bcrypt reads at most 72 bytes; longer is refused

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, COST);
}

export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  const ok = await bcrypt.compare(password, hash ?? DUMMY_HASH);
  return ok && Boolean(hash);
}
