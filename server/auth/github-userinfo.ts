/**
 * GitHub's user info for sign-in, with the e-mail address GitHub has verified. next-auth's
 * GitHub provider takes the public address, else the primary one or the first listed,
 * verified or not: an account could then claim an address its owner never confirmed and
 * keep the real owner from signing up with it here. Only a verified address is taken
 * (primary first); an account with none signs in only if it is already linked.
 */

const API = 'https://api.github.com';

interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

export function verifiedEmailOf(emails: unknown): string | null {
  if (!Array.isArray(emails)) return null;
  const verified = (emails as GitHubEmail[]).filter((e) => e && e.verified === true && typeof e.email === 'string');
  return (verified.find((e) => e.primary) ?? verified[0])?.email ?? null;
}

/** The provider's `userinfo.request`: GitHub's profile, its `email` replaced by a verified address or null. */
export async function requestGitHubUserinfo({ tokens }: { tokens: { access_token?: string } }): Promise<Record<string, unknown>> {
  const headers = { Authorization: `Bearer ${tokens.access_token}`, 'User-Agent': 'contract-data-api', Accept: 'application/vnd.github+json' };
  const profile = (await (await fetch(`${API}/user`, { headers })).json()) as Record<string, unknown>;
  const res = await fetch(`${API}/user/emails`, { headers });
  profile.email = res.ok ? verifiedEmailOf(await res.json()) : null;
  return profile;
}
