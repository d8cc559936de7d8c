'use client';

import { describeAccess, type Access } from '@/lib/key-restrictions';
import { FormDialog } from './create-dialog';
import { ShownNextToField } from './create-dialog';
import { useKeyRestrictions } from './key-restrictions-state';
import { AccessFieldset, type OrganizationChoice } from './restriction-fields';

/** What a calendar feed or webhook endpoint reads, in a list: "Everything", "Personal, Acme Corp". */
export function accessText(access: Access | undefined, organizations: readonly OrganizationChoice[]): string {
  const text = describeAccess(access ?? { kind: 'all' }, new Map(organizations.map((o) => [o.id, o.name])));
  return text[0]!.toUpperCase() + text.slice(1);
}

/** Changes what a calendar feed or webhook endpoint reads (everything / chosen). */
export function AccessDialog({
  title,
  initial,
  organizations,
  intro,
  save,
  onClose,
}: {
  title: string;
  initial: Access | undefined;
  organizations: readonly OrganizationChoice[];
  intro: string;
  save: (access: Access) => Promise<void>;
  onClose: () => void;
}) {
  const restrictions = useKeyRestrictions({ access: initial });
  return (
    <FormDialog
      title={title}
      submitLabel="Save access"
      pendingLabel="Saving…"
      onClose={onClose}
      onSubmit={async () => {
        if (!restrictions.check({ checkAccess: true })) throw new ShownNextToField('access');
        await save(restrictions.access).catch((e: unknown) => restrictions.fail(e));
      }}
    >
      <p className="small muted">{intro}</p>
      <AccessFieldset
        value={restrictions.access}
        onChange={restrictions.setAccess}
        organizations={organizations}
        error={restrictions.errors.access}
        firstInputRef={restrictions.refs.accessRef}
      />
    </FormDialog>
  );
}
