import { signOutAction } from '@/server/actions/auth';

export function SignOutButton() {
  return (
    <form action={signOutAction}>
      <button type="submit" className="btn btn-sm">
        Sign out
      </button>
    </form>
  );
}
