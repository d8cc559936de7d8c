/** What to tell the user about a failed call: the server's message when it sent one. */
export function errorMessage(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'Something went wrong. Try again.';
}

/** role="alert", so that a screen reader announces the failure without moving the focus. */
export function ErrorAlert({ message }: { message: string | null }) {
  return message ? (
    <div className="alert alert-error" role="alert">
      {message}
    </div>
  ) : null;
}
