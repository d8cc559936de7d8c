'use client';

import { useEffect, useId, useRef, type ReactNode } from 'react';

/**
 * A modal built on <dialog>: the browser keeps focus inside it and returns it afterwards,
 * and Escape closes it unless it is not dismissible.
 */
export function Modal({
  title,
  onClose,
  children,
  footer,
  dismissible = true,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  footer: ReactNode;
  /** Whether Escape closes it; a dialog that shows a secret once (a new key, a feed's address) closes only by its button. */
  dismissible?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (dismissible) onClose();
      }}
    >
      <div className="dialog-body">
        <h2 id={titleId}>{title}</h2>
        {children}
      </div>
      <div className="dialog-actions">{footer}</div>
    </dialog>
  );
}
