'use client';

import { useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { ErrorAlert, errorMessage } from '@/components/error-alert';
import { Modal } from '@/components/modal';
import { FieldError } from './restriction-fields';

/**
 * Thrown by an `onSubmit` that has shown the failure next to the field at fault (and
 * announced it there): the dialog then shows no general alert, only stays open.
 */
export class ShownNextToField extends Error {}

/**
 * A dialog that creates something named: a required name, then any further fields
 * (`children`). The name is checked here, so that the server sees only a trimmed name of
 * an allowed length; a failed `onSubmit` is shown in the dialog, which stays open.
 */
export function CreateDialog({
  title,
  intro,
  initialName = '',
  submitLabel,
  nameMaxLength,
  namePlaceholder,
  nameHint,
  onClose,
  onSubmit,
  children,
}: {
  title: string;
  /** Shown above the name field. */
  intro?: ReactNode;
  initialName?: string;
  submitLabel: string;
  nameMaxLength: number;
  namePlaceholder: string;
  nameHint: string;
  onClose: () => void;
  onSubmit: (name: string) => Promise<void>;
  children?: ReactNode;
}) {
  const [name, setName] = useState(initialName);
  const [nameError, setNameError] = useState<string | null>(null);
  const nameId = useId();
  const nameRef = useRef<HTMLInputElement>(null);

  return (
    <FormDialog
      title={title}
      intro={intro}
      submitLabel={submitLabel}
      pendingLabel="Creating…"
      onClose={onClose}
      onSubmit={async () => {
        const trimmed = name.trim();
        if (trimmed.length === 0 || trimmed.length > nameMaxLength) {
          setNameError(trimmed.length === 0 ? 'Enter a name.' : `At most ${nameMaxLength} characters.`);
          // Submitted from the button or Enter elsewhere: the keyboard user lands on the field at fault.
          nameRef.current?.focus();
          throw new ShownNextToField('name');
        }
        // On success the caller closes the dialog.
        await onSubmit(trimmed);
      }}
    >
      <div className="field">
        <label htmlFor={nameId}>Name</label>
        <input
          id={nameId}
          ref={nameRef}
          type="text"
          value={name}
          // Lets a slightly too long name be typed, so that the error can say why it is refused.
          maxLength={nameMaxLength + 10}
          autoFocus
          placeholder={namePlaceholder}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={`${nameId}-hint ${nameId}-error`}
          onChange={(e) => {
            setName(e.target.value);
            setNameError(null);
          }}
        />
        <span id={`${nameId}-hint`} className="hint">
          {nameHint}
        </span>
        <FieldError id={`${nameId}-error`} message={nameError ?? undefined} />
      </div>
      {children}
    </FormDialog>
  );
}

/** A dialog with a form, a Cancel button and a submit button; a failure not shown next to a field is an alert. */
export function FormDialog({
  title,
  intro,
  submitLabel,
  pendingLabel,
  onClose,
  onSubmit,
  children,
}: {
  title: string;
  /** Shown first, above any failure. */
  intro?: ReactNode;
  submitLabel: string;
  pendingLabel: string;
  onClose: () => void;
  onSubmit: () => Promise<void>;
  children: ReactNode;
}) {
  const formId = useId();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function submit(event: FormEvent) {
    event.preventDefault();
    setPending(true);
    setError(null);
    try {
      await onSubmit();
    } catch (e) {
      setError(e instanceof ShownNextToField ? null : errorMessage(e));
      setPending(false);
    }
  }
  return (
    <Modal
      title={title}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" form={formId} className="btn btn-primary" disabled={pending}>
            {pending ? pendingLabel : submitLabel}
          </button>
        </>
      }
    >
      <form id={formId} onSubmit={submit} noValidate>
        {intro}
        <ErrorAlert message={error} />
        {children}
      </form>
    </Modal>
  );
}
