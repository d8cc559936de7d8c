/** A labelled input with its hint and its error, announced to screen readers (aria-describedby). */
export function Field(props: {
  name: string;
  label: string;
  type: string;
  autoComplete: string;
  defaultValue?: string;
  required?: boolean;
  hint?: string;
  error?: string;
}) {
  const id = `field-${props.name}`;
  const describedBy = [props.hint ? `${id}-hint` : '', props.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type}
        autoComplete={props.autoComplete}
        defaultValue={props.defaultValue}
        required={props.required}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={describedBy || undefined}
      />
      {props.hint ? (
        <span id={`${id}-hint`} className="hint">
          {props.hint}
        </span>
      ) : null}
      {props.error ? (
        <span id={`${id}-error`} className="hint" style={{ color: 'var(--danger)' }}>
          {props.error}
        </span>
      ) : null}
    </div>
  );
}
