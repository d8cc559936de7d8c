import bcrypt from 'bcrypt';
import { PASSWORD_HASH_COST } from '@/lib/passwords';
import { sql } from 'drizzle-orm';
import type { Database } from '../client';
import { contracts, memberships, organizations, users, type NewContract } from '../schema';
import { stableUuid } from './ids';

export const DEMO_PASSWORD = 'demo-password';

export const DEMO_USERS = {
  alice: { id: stableUuid('user:alice'), email: 'alice@example.com', name: 'Alice Archer' },
  bob: { id: stableUuid('user:bob'), email: 'bob@example.com', name: 'Bob Brennan' },
  carol: { id: stableUuid('user:carol'), email: 'carol@example.com', name: 'Carol Chen' },
} as const;

export const DEMO_ORGS = {
  acme: { id: stableUuid('org:acme'), name: 'Acme Corp' },
  globex: { id: stableUuid('org:globex'), name: 'Globex' },
} as const;

const DEMO_MEMBERSHIPS = [
  { userId: DEMO_USERS.alice.id, organizationId: DEMO_ORGS.acme.id, role: 'owner' as const },
  { userId: DEMO_USERS.bob.id, organizationId: DEMO_ORGS.acme.id, role: 'member' as const },
  { userId: DEMO_USERS.bob.id, organizationId: DEMO_ORGS.globex.id, role: 'owner' as const },
];

type Owner = { user: keyof typeof DEMO_USERS; org?: keyof typeof DEMO_ORGS };
type Extracted = Pick<
  NewContract,
  | 'expirationDate'
  | 'renewalDate'
  | 'autoRenewal'
  | 'noticePeriod'
  | 'renewalTerm'
  | 'contractValue'
  | 'currency'
  | 'provider'
  | 'client'
  | 'summary'
  | 'confidenceScore'
>;
type DemoContract = Owner & {
  key: string;
  title: string;
  status: NewContract['status'];
  fileName: string;
  fileSize: number;
  // Days before the seed's reference instant; equal values share created_at on purpose,
  // so that the id tie-break of the list order is exercised.
  ageDays: number;
  extracted?: Extracted;
};

// A fixed instant, not "now": the same seed gives the same rows on every run.
const REFERENCE = Date.UTC(2026, 9, 1, 9, 0, 0);

const DEMO_CONTRACTS: DemoContract[] = [
  // alice, personal
  {
    key: 'alice-1', user: 'alice', title: 'Freelance Design Retainer', status: 'completed',
    fileName: 'design-retainer.pdf', fileSize: 248_311, ageDays: 2,
    extracted: {
      expirationDate: '2027-03-31', renewalDate: '2027-03-01', autoRenewal: true, contractValue: 18_000,
      noticePeriod: 'P30D', renewalTerm: 'P1M',
      currency: 'USD', provider: 'Studio Nord LLC', client: 'Alice Archer',
      summary: 'Monthly design retainer of 30 hours, billed in advance.', confidenceScore: 0.94,
    },
  },
  {
    key: 'alice-2', user: 'alice', title: '=HYPERLINK("http://evil.example","Click")', status: 'completed',
    fileName: 'suspicious.pdf', fileSize: 10_240, ageDays: 3,
    extracted: {
      expirationDate: '2027-01-15', renewalDate: null, autoRenewal: false, contractValue: 950.5,
      currency: 'EUR', provider: '@Provider Ltd', client: '+Client, Inc.',
      summary: '-Summary that starts with a minus sign.', confidenceScore: 0.41,
    },
  },
  {
    key: 'alice-3', user: 'alice', title: 'Apartment Lease, "Rue de Rivoli"', status: 'completed',
    fileName: 'bail-appartement.pdf', fileSize: 1_048_576, ageDays: 5,
    extracted: {
      expirationDate: '2028-08-31', renewalDate: '2028-06-01', autoRenewal: true, contractValue: 21_600,
      noticePeriod: 'P3M', renewalTerm: 'P1Y',
      currency: 'EUR', provider: 'Société Immobilière Lefèvre', client: 'Alice Archer',
      summary: 'Unfurnished lease, three years.\nNotice period: three months.', confidenceScore: 0.88,
    },
  },
  { key: 'alice-4', user: 'alice', title: 'Gym Membership', status: 'pending', fileName: 'gym.pdf', fileSize: 51_200, ageDays: 5 },
  { key: 'alice-5', user: 'alice', title: 'Car Insurance Policy', status: 'processing', fileName: 'insurance.pdf', fileSize: 402_113, ageDays: 9 },
  { key: 'alice-6', user: 'alice', title: 'Scanned Handwritten Agreement', status: 'failed', fileName: 'scan-0042.jpg', fileSize: 3_221_004, ageDays: 14 },

  // bob, personal
  {
    key: 'bob-1', user: 'bob', title: 'Home Broadband', status: 'completed',
    fileName: 'broadband.pdf', fileSize: 88_004, ageDays: 1,
    extracted: {
      expirationDate: '2027-05-20', renewalDate: '2027-04-20', autoRenewal: true, contractValue: 540,
      noticePeriod: 'P30D', renewalTerm: 'P1Y',
      currency: 'GBP', provider: 'FibreNet UK', client: 'Bob Brennan',
      summary: '24-month broadband contract with a static IP address.', confidenceScore: 0.97,
    },
  },
  {
    key: 'bob-2', user: 'bob', title: 'Consulting Side Project', status: 'completed',
    fileName: 'consulting.docx', fileSize: 45_777, ageDays: 4,
    extracted: {
      expirationDate: null, renewalDate: null, autoRenewal: null, contractValue: null,
      currency: null, provider: 'Bob Brennan', client: null,
      summary: 'Open-ended consulting arrangement; no term or fee stated.', confidenceScore: 0.52,
    },
  },
  { key: 'bob-3', user: 'bob', title: 'Phone Plan', status: 'pending', fileName: 'phone.pdf', fileSize: 12_800, ageDays: 6 },
  { key: 'bob-4', user: 'bob', title: 'Storage Unit Rental', status: 'failed', fileName: 'storage.png', fileSize: 2_400_000, ageDays: 11 },
  { key: 'bob-5', user: 'bob', title: 'Music Streaming Family Plan', status: 'processing', fileName: 'music.pdf', fileSize: 9_001, ageDays: 12 },

  // carol, personal (carol belongs to no organisation)
  {
    key: 'carol-1', user: 'carol', title: 'Photography Services Agreement', status: 'completed',
    fileName: 'photo-services.pdf', fileSize: 312_000, ageDays: 3,
    extracted: {
      expirationDate: '2027-09-30', renewalDate: '2027-09-01', autoRenewal: false, contractValue: 3_200,
      currency: 'CHF', provider: 'Carol Chen Photography', client: 'Bergmann AG',
      summary: 'Four product shoots per year with usage rights for web and print.', confidenceScore: 0.9,
    },
  },
  {
    key: 'carol-2', user: 'carol', title: 'Co-working Desk', status: 'completed',
    fileName: 'desk.pdf', fileSize: 64_000, ageDays: 8,
    extracted: {
      expirationDate: '2026-12-31', renewalDate: '2026-12-01', autoRenewal: true, contractValue: 2_400,
      noticePeriod: 'P30D', renewalTerm: 'P1M',
      currency: 'USD', provider: 'WeSpace', client: 'Carol Chen',
      summary: null, confidenceScore: 0.73,
    },
  },
  { key: 'carol-3', user: 'carol', title: 'Website Hosting', status: 'pending', fileName: 'hosting.pdf', fileSize: 20_480, ageDays: 10 },
  { key: 'carol-4', user: 'carol', title: 'Camera Equipment Lease', status: 'processing', fileName: 'lease.pdf', fileSize: 150_000, ageDays: 20 },

  // Acme Corp (alice owner, bob member)
  {
    key: 'acme-1', user: 'alice', org: 'acme', title: 'Salesforce Enterprise Subscription', status: 'completed',
    fileName: 'salesforce-msa.pdf', fileSize: 2_097_152, ageDays: 0,
    extracted: {
      expirationDate: '2027-06-30', renewalDate: '2027-04-01', autoRenewal: true, contractValue: 148_500,
      noticePeriod: 'P90D', renewalTerm: 'P1Y',
      currency: 'USD', provider: 'Salesforce, Inc.', client: 'Acme Corp',
      summary: 'Enterprise CRM licences for 150 users with premier support.', confidenceScore: 0.98,
    },
  },
  {
    key: 'acme-2', user: 'bob', org: 'acme', title: 'Office Lease — Berlin', status: 'completed',
    fileName: 'office-lease-berlin.pdf', fileSize: 5_500_000, ageDays: 2,
    extracted: {
      expirationDate: '2029-12-31', renewalDate: '2029-06-30', autoRenewal: false, contractValue: 432_000,
      currency: 'EUR', provider: 'Spree Immobilien GmbH', client: 'Acme Corp',
      summary: 'Five-year lease of 800 m² office space, indexed yearly.', confidenceScore: 0.91,
    },
  },
  {
    key: 'acme-3', user: 'alice', org: 'acme', title: 'Cloud Hosting (AWS) Enterprise Agreement', status: 'completed',
    fileName: 'aws-ea.pdf', fileSize: 780_000, ageDays: 2,
    extracted: {
      expirationDate: '2027-01-31', renewalDate: '2027-01-01', autoRenewal: true, contractValue: 1_250_000,
      noticePeriod: 'P60D', renewalTerm: 'P1Y',
      currency: 'USD', provider: 'Amazon Web Services', client: 'Acme Corp',
      summary: 'Committed spend agreement with 12% discount.', confidenceScore: 0.86,
    },
  },
  {
    key: 'acme-4', user: 'alice', org: 'acme', title: 'Tokyo Distributor Agreement', status: 'completed',
    fileName: 'tokyo-distribution.pdf', fileSize: 190_000, ageDays: 7,
    extracted: {
      expirationDate: '2028-03-31', renewalDate: null, autoRenewal: false, contractValue: 25_000_000,
      currency: 'JPY', provider: 'Acme Corp', client: 'Sakura Trading K.K.',
      summary: 'Exclusive distribution in Japan; minimum yearly volume.', confidenceScore: 0.67,
    },
  },
  { key: 'acme-5', user: 'bob', org: 'acme', title: 'Payroll Provider Contract', status: 'pending', fileName: 'payroll.pdf', fileSize: 99_999, ageDays: 4 },
  { key: 'acme-6', user: 'alice', org: 'acme', title: 'Janitorial Services', status: 'processing', fileName: 'cleaning.pdf', fileSize: 33_000, ageDays: 13 },
  { key: 'acme-7', user: 'alice', org: 'acme', title: 'Legacy Vendor NDA', status: 'failed', fileName: 'nda-scan.tiff', fileSize: 7_340_032, ageDays: 30 },
  {
    key: 'acme-8', user: 'bob', org: 'acme', title: 'Laptop Leasing', status: 'completed',
    fileName: 'laptops.pdf', fileSize: 120_000, ageDays: 40,
    extracted: {
      // Renewing every year since 2023: the extracted date is years back, the next renewal
      // rolls forward (docs/api-guide.md, "Renewal decisions").
      expirationDate: '2026-11-30', renewalDate: '2023-11-01', autoRenewal: true, contractValue: 86_400.75,
      noticePeriod: 'P3M', renewalTerm: 'P1Y',
      currency: 'GBP', provider: 'LeaseIT Ltd', client: 'Acme Corp',
      summary: '120 laptops on a 36-month operating lease.', confidenceScore: 0.79,
    },
  },

  // Globex (bob only)
  {
    key: 'globex-1', user: 'bob', org: 'globex', title: 'Globex Master Services Agreement', status: 'completed',
    fileName: 'globex-msa.pdf', fileSize: 640_000, ageDays: 1,
    extracted: {
      expirationDate: '2027-10-31', renewalDate: '2027-08-01', autoRenewal: true, contractValue: 2_000_000,
      noticePeriod: 'P6M', renewalTerm: 'P2Y',
      currency: 'USD', provider: 'Globex', client: 'Initech',
      summary: 'Framework agreement for engineering services.', confidenceScore: 0.95,
    },
  },
  {
    key: 'globex-2', user: 'bob', org: 'globex', title: 'Swiss Bank Custody Agreement', status: 'completed',
    fileName: 'custody.pdf', fileSize: 410_000, ageDays: 6,
    extracted: {
      expirationDate: '2030-01-01', renewalDate: '2029-10-01', autoRenewal: null, contractValue: 75_000,
      currency: 'CHF', provider: 'Banque Privée Genève SA', client: 'Globex',
      summary: 'Custody of securities with quarterly reporting.', confidenceScore: 0.83,
    },
  },
  { key: 'globex-3', user: 'bob', org: 'globex', title: 'Marketing Agency Retainer', status: 'pending', fileName: 'agency.pdf', fileSize: 77_000, ageDays: 6 },
  { key: 'globex-4', user: 'bob', org: 'globex', title: 'Fleet Vehicles Lease', status: 'processing', fileName: 'fleet.pdf', fileSize: 230_000, ageDays: 15 },
  { key: 'globex-5', user: 'bob', org: 'globex', title: 'Corrupted Upload', status: 'failed', fileName: 'broken.pdf', fileSize: 0, ageDays: 16 },
];

/** The demo contracts as rows, with their stable ids. */
export function demoContractRows(): NewContract[] {
  return DEMO_CONTRACTS.map((c) => {
    const createdAt = new Date(REFERENCE - c.ageDays * 86_400_000);
    const completed = c.status === 'completed';
    return {
      id: demoContractId(c.key),
      ownerId: DEMO_USERS[c.user].id,
      organizationId: c.org ? DEMO_ORGS[c.org].id : null,
      title: c.title,
      status: c.status,
      fileName: c.fileName,
      fileSize: c.fileSize,
      createdAt,
      // Completed contracts were updated when extraction finished, an hour after upload.
      updatedAt: completed ? new Date(createdAt.getTime() + 3_600_000) : createdAt,
      ...(completed ? c.extracted : {}),
    };
  });
}

export function demoContractId(key: string): string {
  return stableUuid(`contract:${key}`);
}

/**
 * Inserts the demo accounts, organisations, memberships and contracts. Every row has a
 * fixed key and conflicts are skipped, so a second run changes nothing.
 */
export async function seedDemo(db: Database): Promise<{ inserted: number }> {
  let inserted = 0;
  const existing = await db
    .select({ email: users.email })
    .from(users)
    .where(sql`${users.email} in ${Object.values(DEMO_USERS).map((u) => u.email)}`);
  const missing = Object.values(DEMO_USERS).filter((u) => !existing.some((e) => e.email === u.email));
  if (missing.length > 0) {
    const passwordHash = await bcrypt.hash(DEMO_PASSWORD, PASSWORD_HASH_COST);
    const rows = await db
      .insert(users)
      // Verified when created (migration 0011's default would be the seed's own time: a reseed must give the same rows).
      .values(missing.map((u) => ({ ...u, passwordHash, createdAt: new Date(REFERENCE - 90 * 86_400_000), emailVerifiedAt: new Date(REFERENCE - 90 * 86_400_000) })))
      .onConflictDoNothing()
      .returning({ id: users.id });
    inserted += rows.length;
  }
  const orgRows = await db
    .insert(organizations)
    .values(Object.values(DEMO_ORGS).map((o) => ({ ...o, createdAt: new Date(REFERENCE - 90 * 86_400_000) })))
    .onConflictDoNothing()
    .returning({ id: organizations.id });
  const membershipRows = await db
    .insert(memberships)
    .values(DEMO_MEMBERSHIPS.map((m) => ({ ...m, createdAt: new Date(REFERENCE - 90 * 86_400_000) })))
    .onConflictDoNothing()
    .returning({ userId: memberships.userId });
  const contractRows = await db
    .insert(contracts)
    .values(demoContractRows())
    .onConflictDoNothing()
    .returning({ id: contracts.id });
  inserted += orgRows.length + membershipRows.length + contractRows.length;
  return { inserted };
}

/** Deletes every row of every table (the schema and migrations stay). */
export async function resetData(db: Database): Promise<void> {
  await db.execute(sql`TRUNCATE access_tokens, contracts, memberships, organizations, users CASCADE`);
}
