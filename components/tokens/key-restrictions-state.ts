'use client';

import { useRef, useState } from 'react';
import { DEFAULT_PERMISSIONS, MAX_ALLOWED_ADDRESSES, type Access } from '@/lib/key-restrictions';
import { ShownNextToField } from './create-dialog';
import { addressesOf, fieldErrorOf } from './restriction-fields';

type Field = 'access' | 'permissions' | 'allowedAddresses';

/**
 * The state of a key's restriction fields in a dialog (create, edit): the values, the
 * error of each field (the dialog's own checks, then the server's, which it names by
 * `data.details[].param`), and the focus moved to the first field at fault so that a
 * keyboard user lands where the problem is.
 */
export function useKeyRestrictions(initial?: { access?: Access; permissions?: readonly string[]; allowedAddresses?: readonly string[] }) {
  const [access, setAccess] = useState<Access>(initial?.access ?? { kind: 'all' });
  const [permissions, setPermissions] = useState<string[]>([...(initial?.permissions ?? DEFAULT_PERMISSIONS)]);
  const [addresses, setAddresses] = useState((initial?.allowedAddresses ?? []).join('\n'));
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const accessRef = useRef<HTMLInputElement>(null);
  const permissionsRef = useRef<HTMLInputElement>(null);
  const addressesRef = useRef<HTMLTextAreaElement>(null);

  function focus(field: Field) {
    (field === 'access' ? accessRef : field === 'permissions' ? permissionsRef : addressesRef).current?.focus();
  }

  function show(found: Partial<Record<Field, string>>): boolean {
    setErrors(found);
    const first = (['access', 'permissions', 'allowedAddresses'] as const).find((f) => found[f]);
    if (first) focus(first);
    return first === undefined;
  }

  return {
    access,
    permissions,
    addresses,
    errors,
    refs: { accessRef, permissionsRef, addressesRef },
    setAccess: (value: Access) => {
      setAccess(value);
      setErrors((e) => ({ ...e, access: undefined }));
    },
    setPermissions: (value: string[]) => {
      setPermissions(value);
      setErrors((e) => ({ ...e, permissions: undefined }));
    },
    setAddresses: (value: string) => {
      setAddresses(value);
      setErrors((e) => ({ ...e, allowedAddresses: undefined }));
    },
    allowedAddresses: () => addressesOf(addresses),
    /**
     * The checks the dialog can make itself (the addresses' form is the server's to judge,
     * with the deployment's own reasons); false when a field is at fault.
     */
    check(options: { checkAccess: boolean }): boolean {
      const found: Partial<Record<Field, string>> = {};
      if (options.checkAccess && access.kind === 'chosen' && !access.personal && access.organizationIds.length === 0) {
        found.access = 'Choose what it may read: your personal contracts, one or more organisations, or everything.';
      }
      if (permissions.length === 0) found.permissions = 'Choose at least one permission.';
      const count = addressesOf(addresses).length;
      if (count > MAX_ALLOWED_ADDRESSES) found.allowedAddresses = `At most ${MAX_ALLOWED_ADDRESSES} addresses or ranges (${count} entered).`;
      return show(found);
    },
    /** Shows the server's complaint next to its field (and throws ShownNextToField), or rethrows. */
    fail(error: unknown): never {
      const field = fieldErrorOf(error);
      if (field && (field.param === 'access' || field.param === 'permissions' || field.param === 'allowedAddresses')) {
        show({ [field.param]: field.message });
        throw new ShownNextToField(field.message);
      }
      throw error;
    },
  };
}
