import { expect, type Page } from '@playwright/test';
import { waitForMail } from './mailbox';
import { fillSignInForm } from './session';

/**
 * A new account through the sign-up form, verified through the e-mailed link (the suite's
 * SMTP server, e2e/support/mailbox.ts), then signed in: the page ends on `callbackUrl`.
 * Sign-up answers "Check your e-mail to finish" whatever the address (issue 24), so a new
 * account is reached only through its mail.
 */
export async function signUpVerified(page: Page, account: { name: string; email: string; password: string; callbackUrl: string }): Promise<void> {
  await page.goto(`/sign-up?callbackUrl=${encodeURIComponent(account.callbackUrl)}`);
  await page.getByLabel('Name').fill(account.name);
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page.getByRole('status')).toContainText('Check your e-mail to finish');
  const link = (await waitForMail(account.email, /^Verify your e-mail address/)).links[0]!;
  await page.goto(link);
  await page.getByRole('button', { name: 'Verify my e-mail address' }).click();
  await expect(page.getByRole('status')).toContainText('is verified');
  await page.goto(`/sign-in?callbackUrl=${encodeURIComponent(account.callbackUrl)}`);
  await fillSignInForm(page, account.email, account.password);
  await page.waitForURL((url) => !url.pathname.startsWith('/sign-in'));
}
