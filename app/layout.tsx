import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { TopBar } from '@/components/top-bar';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'Contract Data API', template: '%s · Contract Data API' },
  description: 'Programmatic access to your contracts: renewal dates, values, parties and more.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TopBar />
        {children}
      </body>
    </html>
  );
}
