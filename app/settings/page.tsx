import { redirect } from 'next/navigation';
import { requireUser } from '@/server/auth/session';

export default async function SettingsIndex() {
  await requireUser('/settings');
  redirect('/settings/api-keys');
}
