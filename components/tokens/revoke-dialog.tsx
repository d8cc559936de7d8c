'use client';

import { useState, type ReactNode } from 'react';
import { ErrorAlert, errorMessage } from '@/components/error-alert';
import { Modal } from '@/components/modal';

/**
 * Confirms revoking `name` (or another irreversible action: `title`, `pendingLabel`);
 * `children` say what it does. Cancel has the focus, so
 * that Enter pressed by habit does not revoke. A failed `onConfirm` is shown in the dialog,
 * which stays open.
 */
export function RevokeDialog({
  name,
  confirmLabel,
  title,
  pendingLabel = 'Revoking…',
  onClose,
  onConfirm,
  children,
}: {
  name: string;
  confirmLabel: string;
  /** Default: Revoke “name”? */
  title?: string;
  pendingLabel?: string;
  onClose: () => void;
  onConfirm: () => Promise<void>;
  children: ReactNode;
}) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function revoke() {
    setPending(true);
    try {
      // On success the caller closes the dialog, so `pending` is never reset here.
      await onConfirm();
    } catch (e) {
      setError(errorMessage(e));
      setPending(false);
    }
  }

  return (
    <Modal
      title={title ?? `Revoke “${name}”?`}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose} autoFocus>
            Cancel
          </button>
          <button type="button" className="btn btn-danger" onClick={revoke} disabled={pending}>
            {pending ? pendingLabel : confirmLabel}
          </button>
        </>
      }
    >
      <ErrorAlert message={error} />
      {children}
    </Modal>
  );
}
