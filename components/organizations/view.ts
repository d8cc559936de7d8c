import { toTokenRow, type TokenRow } from '@/components/tokens/types';

// Not a client module: the organisation's page (a server component) converts its data with it too.

/** The organisation's page as the client holds it (dates as ISO strings). */
export interface OrganizationKeysView {
  organization: { id: string; name: string; memberKeysAllowed: boolean };
  organizationKeys: (TokenRow & { createdByEmail: string | null })[];
  memberKeys: (TokenRow & { ownerEmail: string; ownerName: string | null })[];
}

type Input = Parameters<typeof toTokenRow>[0];

export function toOrganizationKeysView(data: {
  organization: OrganizationKeysView['organization'];
  organizationKeys: (Input & { createdByEmail: string | null })[];
  memberKeys: (Input & { ownerEmail: string; ownerName: string | null })[];
}): OrganizationKeysView {
  return {
    organization: data.organization,
    organizationKeys: data.organizationKeys.map((k) => ({ ...toTokenRow(k), createdByEmail: k.createdByEmail })),
    memberKeys: data.memberKeys.map((k) => ({ ...toTokenRow(k), ownerEmail: k.ownerEmail, ownerName: k.ownerName })),
  };
}

