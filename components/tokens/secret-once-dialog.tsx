'use client';

import { useRef, useState, type ReactNode } from 'react';
import { Modal } from '@/components/modal';

/**
 * Shows a secret (a new API key, a feed's address) the only time it exists in full, with
 * a copy button. Escape does not close it: the secret would be gone before it was copied.
 * `children` come after the copy status: how to use the secret.
 */
export function SecretOnceDialog({
  title,
  intro,
  warning,
  secret,
  secretTestId,
  copyFailedText,
  doneLabel,
  onClose,
  children,
}: {
  title: string;
  intro: ReactNode;
  warning: ReactNode;
  secret: string;
  secretTestId: string;
  /** Tells the user that the secret is selected for a manual copy. */
  copyFailedText: string;
  doneLabel: string;
  onClose: () => void;
  children?: ReactNode;
}) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const codeRef = useRef<HTMLElement>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      // Clipboard refused (permissions, insecure context): select the text for a manual copy.
      const range = document.createRange();
      if (codeRef.current) {
        range.selectNodeContents(codeRef.current);
        window.getSelection()?.removeAllRanges();
        window.getSelection()?.addRange(range);
      }
      setCopied('failed');
    }
  }

  return (
    <Modal
      title={title}
      onClose={onClose}
      dismissible={false}
      footer={
        <button type="button" className="btn btn-primary" onClick={onClose}>
          {doneLabel}
        </button>
      }
    >
      <p>{intro}</p>
      <div className="alert alert-warning" role="note">
        {warning}
      </div>
      <div className="secret-box">
        <code ref={codeRef} data-testid={secretTestId}>
          {secret}
        </code>
        <button type="button" className="btn" onClick={copy}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
      </div>
      <p className="small muted" role="status" aria-live="polite">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'failed' ? copyFailedText : ''}
      </p>
      {children}
    </Modal>
  );
}
