/**
 * The bcrypt cost of every password hash: new accounts, the seeds, and the dummy hash
 * an unknown e-mail is compared against, so that an unknown e-mail and a wrong password
 * take the same time (server/auth/passwords.ts). Hashes of a lower cost are upgraded at
 * their next successful sign-in.
 */
export const PASSWORD_HASH_COST = 11;
